/**
 * The real databases the filter proofs run SQL in: a fresh PostgreSQL database and a fresh
 * MariaDB database per test process (`svc_filter_<pid>_<random>`, dropped at the end) and an
 * in-memory SQLite database, each with one table `t (id, <one typed column per generated field>)`.
 *
 * Column setup follows docs/filter.md: PostgreSQL text columns use COLLATE "C" (code point order,
 * like the engine); MariaDB runs with `NO_BACKSLASH_ESCAPES` and text columns use
 * `utf8mb4_nopad_bin` (code point order, trailing spaces significant); SQLite runs with
 * `PRAGMA case_sensitive_like = ON` (LIKE is case-insensitive by default there) and stores
 * booleans as 0/1.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { JsonValue } from '../../../src/expr/ast.js';

/** A typed column of the test table. */
export interface ColumnSpec {
  readonly name: string;
  readonly type: 'number' | 'string' | 'boolean';
}

/** A row to insert: id and a value per column (null allowed). */
export interface DbRow {
  readonly id: number;
  readonly values: ReadonlyMap<string, JsonValue>;
}

const PG = { host: '127.0.0.1', port: 5432, user: 'postgres' };

const PG_TYPES = { number: 'double precision', string: 'text COLLATE "C"', boolean: 'boolean' } as const;
const MARIA_TYPES = { number: 'DOUBLE', string: 'TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin', boolean: 'BOOLEAN' } as const;

/** MariaDB as this machine kind runs it: root over the local socket, else over TCP without a password. */
const MARIA_SOCKET = '/run/mysqld/mysqld.sock';
function mariaConnection(database?: string): mysql.ConnectionOptions {
  const where = existsSync(MARIA_SOCKET) ? { socketPath: MARIA_SOCKET } : { host: '127.0.0.1', port: 3306 };
  return { ...where, user: 'root', charset: 'utf8mb4', ...(database ? { database } : {}) };
}
const SQLITE_TYPES = { number: 'REAL', string: 'TEXT', boolean: 'INTEGER' } as const;

/** Both databases, with the table created. */
export class FilterDatabases {
  private constructor(
    private readonly admin: pg.Client,
    readonly pg: pg.Client,
    readonly maria: mysql.Connection,
    readonly sqlite: Database.Database,
    private readonly dbName: string,
    private readonly columns: readonly ColumnSpec[],
  ) {}

  /** Creates the PostgreSQL database and both tables. */
  static async open(columns: readonly ColumnSpec[]): Promise<FilterDatabases> {
    const dbName = `svc_filter_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ ...PG, database: 'postgres' });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName} ENCODING 'UTF8' TEMPLATE template0`);
    const client = new pg.Client({ ...PG, database: dbName });
    await client.connect();
    const pgCols = columns.map((c) => `${c.name} ${PG_TYPES[c.type]}`).join(', ');
    await client.query(`CREATE TABLE t (id integer PRIMARY KEY, ${pgCols})`);
    const maria = await mysql.createConnection(mariaConnection());
    await maria.query(`CREATE DATABASE ${dbName} CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`);
    await maria.query(`USE ${dbName}`);
    // Literals take the connection's collation: the same code point order as the columns.
    await maria.query('SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin');
    // docs/filter.md: the filter's literals follow standard SQL (quote doubling only).
    await maria.query(`SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')`);
    const mariaCols = columns.map((c) => `${c.name} ${MARIA_TYPES[c.type]}`).join(', ');
    await maria.query(`CREATE TABLE t (id INTEGER PRIMARY KEY, ${mariaCols})`);
    const sqlite = new Database(':memory:');
    sqlite.pragma('case_sensitive_like = ON');
    const liteCols = columns.map((c) => `${c.name} ${SQLITE_TYPES[c.type]}`).join(', ');
    sqlite.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, ${liteCols})`);
    return new FilterDatabases(admin, client, maria, sqlite, dbName, columns);
  }

  /** Replaces the rows of both tables (one bulk INSERT each). */
  async load(rows: readonly DbRow[]): Promise<void> {
    const names = ['id', ...this.columns.map((c) => c.name)];
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      const vals = [r.id, ...this.columns.map((c) => r.values.get(c.name) ?? null)];
      const start = params.length;
      params.push(...vals);
      return `(${vals.map((_, i) => `$${start + i + 1}`).join(', ')})`;
    });
    await this.pg.query('TRUNCATE t');
    if (rows.length > 0) await this.pg.query(`INSERT INTO t (${names.join(', ')}) VALUES ${tuples.join(', ')}`, params);
    // NOTE: MariaDB gets the values as prepared-statement parameters (binary protocol): the
    // client library's own escaping writes backslash escapes, which NO_BACKSLASH_ESCAPES reads
    // as text.
    await this.maria.query('DELETE FROM t');
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      const values = chunk.flatMap((r) => [r.id, ...this.columns.map((c) => r.values.get(c.name) ?? null)]);
      const tuple = `(${names.map(() => '?').join(', ')})`;
      await this.maria.execute(`INSERT INTO t (${names.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`, values);
    }
    this.sqlite.exec('DELETE FROM t');
    const insert = this.sqlite.prepare(`INSERT INTO t (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`);
    const all = this.sqlite.transaction((rs: readonly DbRow[]) => {
      for (const r of rs) {
        insert.run(
          r.id,
          ...this.columns.map((c) => {
            const v = r.values.get(c.name) ?? null;
            return typeof v === 'boolean' ? (v ? 1 : 0) : v;
          }),
        );
      }
    });
    all(rows);
  }

  /**
   * Runs `SELECT id FROM t WHERE <filter>` for every filter in PostgreSQL, all in one round trip
   * (UNION ALL). A filter that fails is reported as an Error in its slot.
   */
  async selectPg(filters: readonly string[]): Promise<(Set<number> | Error)[]> {
    if (filters.length === 0) return [];
    const sql = filters.map((f, k) => `SELECT ${k} AS k, id FROM t WHERE ${f}`).join('\nUNION ALL\n');
    try {
      const res = await this.pg.query<{ k: number; id: number }>(sql);
      const out = filters.map(() => new Set<number>());
      for (const r of res.rows) out[r.k]!.add(r.id);
      return out;
    } catch {
      // Find the culprit(s): run each filter alone.
      const out: (Set<number> | Error)[] = [];
      for (const f of filters) {
        try {
          const res = await this.pg.query<{ id: number }>(`SELECT id FROM t WHERE ${f}`);
          out.push(new Set(res.rows.map((r) => r.id)));
        } catch (err) {
          out.push(err as Error);
        }
      }
      return out;
    }
  }

  /**
   * Runs `SELECT id FROM t WHERE <filter>` for every filter in MariaDB, in one round trip
   * (UNION ALL). A filter that fails is reported as an Error in its slot.
   */
  async selectMaria(filters: readonly string[]): Promise<(Set<number> | Error)[]> {
    if (filters.length === 0) return [];
    const one = async (f: string): Promise<Set<number> | Error> => {
      try {
        const [rows] = await this.maria.query(`SELECT id FROM t WHERE ${f}`);
        return new Set((rows as { id: number }[]).map((r) => r.id));
      } catch (err) {
        return err as Error;
      }
    };
    const sql = filters.map((f, k) => `SELECT ${k} AS k, id FROM t WHERE ${f}`).join('\nUNION ALL\n');
    try {
      const [rows] = await this.maria.query(sql);
      const out = filters.map(() => new Set<number>());
      for (const r of rows as { k: number; id: number }[]) out[Number(r.k)]!.add(r.id);
      return out;
    } catch {
      // Find the culprit(s): run each filter alone.
      const out: (Set<number> | Error)[] = [];
      for (const f of filters) out.push(await one(f));
      return out;
    }
  }

  /** Runs `SELECT id FROM t WHERE <filter>` in SQLite. */
  selectSqlite(filter: string): Set<number> | Error {
    try {
      const rows = this.sqlite.prepare(`SELECT id FROM t WHERE ${filter}`).all() as { id: number }[];
      return new Set(rows.map((r) => r.id));
    } catch (err) {
      return err as Error;
    }
  }

  /** Closes the databases and drops the PostgreSQL and MariaDB ones. */
  async close(): Promise<void> {
    this.sqlite.close();
    await this.maria.query(`DROP DATABASE IF EXISTS ${this.dbName}`);
    await this.maria.end();
    await this.pg.end();
    await this.admin.query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
    await this.admin.end();
  }
}
