// readme.test.mjs — js/README.md as a user follows it: `npm install path/to/js` in a new project
// builds the package through its `prepare` script (here a copy of the package without dist/ whose
// node_modules, the pinned build tools, are the ones build.sh installed: nothing is downloaded),
// then the README's usage example (the ```js block after `<!-- example: run -->`) runs in that
// project against a real `mnemo serve`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dbTarget, startServer, stopServer, tmp } from './server.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..'); // the built package (build.sh)

// js/README.md: beside this file in the source tree; under ctest the package is a copy in the
// build directory (build.sh), whose CMakeCache.txt names the source tree.
function readmePath() {
  const beside = join(pkg, 'README.md');
  if (existsSync(beside)) return beside;
  const cache = readFileSync(join(process.env.BUILD_DIR, 'CMakeCache.txt'), 'utf8');
  return join(cache.match(/^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$/m)[1], 'js', 'README.md');
}

function example() {
  const blocks = [...readFileSync(readmePath(), 'utf8').matchAll(/^<!-- example: run -->\n\s*```js\n([\s\S]*?)^```/gm)];
  assert.equal(blocks.length, 1, 'js/README.md marks one usage example');
  return blocks[0][1];
}

const { url, proc } = await startServer(dbTarget('readme'));
after(async () => { assert.equal(await stopServer(proc), 0); });

test('npm install path/to/js builds the package, and the README example runs in that project', () => {
  const copy = join(tmp, 'readme-js');
  mkdirSync(copy);
  for (const f of ['src', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json']) {
    cpSync(join(pkg, f), join(copy, f), { recursive: true });
  }
  symlinkSync(join(pkg, 'node_modules'), join(copy, 'node_modules'));
  assert.equal(existsSync(join(copy, 'dist')), false);
  const app = join(tmp, 'readme-app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module' }));
  execFileSync('npm', ['install', copy, '--offline', '--no-audit', '--no-fund', '--cache', join(tmp, 'npm-cache')],
    { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(existsSync(join(copy, 'dist', 'index.js')), 'prepare built dist/');

  writeFileSync(join(app, 'example.mjs'), example());
  const out = execFileSync('node', ['example.mjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, MNEMO_BASE_URL: url } });
  assert.deepEqual(JSON.parse(out).map((m) => [m.role, m.content]), [['system', 'Be brief.'], ['user', 'hi']]);
});
