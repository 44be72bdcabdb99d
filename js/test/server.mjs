// server.mjs — starts and stops a real `mnemo serve` for the tests: the binary named by $MNEMO,
// a scratch HOME, a free loopback port (--listen 127.0.0.1:0; the URL is the first line of
// stdout). The database is a SQLite file, or a fresh PostgreSQL database in the pg/ variant
// (MNEMO_TEST_PG_URL, see tests/CMakeLists.txt).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

export const MNEMO = process.env.MNEMO;
assert.ok(MNEMO, 'MNEMO must name the mnemo binary');
export const tmp = mkdtempSync(join(process.env.MNEMO_TEST_TMP || '/tmp', 'js-'));
const env = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'cfg'), XDG_DATA_HOME: join(tmp, 'data') };
delete env.MNEMO_API_KEY;
delete env.MNEMO_SERVER_API_KEYS;

let dbCount = 0;
/** A database for one server: the file path, or a fresh database on the pg/ test server. */
export function dbTarget(name) {
  const base = process.env.MNEMO_TEST_PG_URL;
  if (!base) return join(tmp, `${name}.db`);
  const db = `mnemo_js_${process.pid}_${dbCount++}`;
  execFileSync('psql', ['-X', '-q', base, '-c', `DROP DATABASE IF EXISTS ${db}`, '-c', `CREATE DATABASE ${db}`]);
  return base.replace(/\/[^/?]*(\?|$)/, `/${db}$1`);
}

/** Starts `mnemo --db db serve`; resolves { url, proc } once it printed its URL. */
export function startServer(db, extra = [], extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(MNEMO, ['--db', db, 'serve', '--listen', '127.0.0.1:0', ...extra],
      { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve({ url: buf.slice(0, nl), proc });
    });
    proc.on('exit', (code) => reject(new Error(`mnemo serve exited with ${code} before printing its URL`)));
  });
}

/** SIGTERM, and the exit code (0 when it shut down cleanly). */
export function stopServer(proc) {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    proc.on('exit', (code) => resolve(code));
    proc.kill('SIGTERM');
  });
}
