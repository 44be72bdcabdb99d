// server.mjs — what the interop tests share: a private HOME for `mnemo serve`, the database a
// server opens (the file on SQLite, or a fresh database on the test server in the pg/ variant:
// MNEMO_TEST_PG_URL, see tests/CMakeLists.txt), and starting and stopping the server. run.sh
// copies it beside every suite's tests.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

export const MNEMO = process.env.MNEMO;
if (!MNEMO) throw new Error('MNEMO must name the mnemo binary');

// A scratch folder and an environment whose HOME and XDG folders are in it, without API keys.
export function testEnv(prefix) {
  const tmp = mkdtempSync(join(process.env.MNEMO_TEST_TMP || '/tmp', prefix));
  const env = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'cfg'), XDG_DATA_HOME: join(tmp, 'data') };
  delete env.MNEMO_API_KEY;
  delete env.MNEMO_SERVER_API_KEYS;
  return { tmp, env };
}

let dbCount = 0;
export function dbTarget(path) {
  const base = process.env.MNEMO_TEST_PG_URL;
  if (!base) return path;
  const name = `mnemo_i_${process.pid}_${dbCount++}`;
  execFileSync('psql', ['-X', '-q', base, '-c', `DROP DATABASE IF EXISTS ${name}`, '-c', `CREATE DATABASE ${name}`]);
  return base.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
}

// Starts `mnemo serve` on a free loopback port; resolves with { url, proc } once it prints its URL.
export function startServer(env, db, extra = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(MNEMO, ['--db', db, 'serve', '--listen', '127.0.0.1:0', ...extra],
      { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve({ url: buf.slice(0, nl), proc });
    });
    proc.on('exit', (code) => reject(new Error(`mnemo serve exited with ${code}`)));
  });
}

// Stops it with SIGTERM; resolves with its exit code.
export function stopServer(proc) {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    proc.on('exit', (code) => resolve(code));
    proc.kill('SIGTERM');
  });
}
