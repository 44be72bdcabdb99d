// limits_ts.mjs — the TypeScript side of limits.py: each case through the built @mnemo/client's
// method for its operation (the operation's name in camelCase, as src/generated.ts names it).
// Usage: node limits_ts.mjs URL JSDIR < cases.json
//   URL: the running `mnemo serve`; JSDIR: the built package (js/test/build.sh's $BUILD_DIR/js).
//   cases.json: [[op, param, value, want, params], …], params as REST takes them (path
//   parameters by name among them).
// Prints one JSON line per case, in order: {"threw": null} for a success, else {"threw": the
// error's name, "message": its message}; then one line {"ranges": RANGES} (the ranges the
// package was generated with) for limits.py to hold against `mnemo api --json`. Exits 2, saying
// why, when the built package is missing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, jsDir] = process.argv.slice(2);
const entry = join(jsDir ?? '', 'dist', 'index.js');
if (!url || !existsSync(entry)) {
  console.error(`limits_ts: no built @mnemo/client at ${entry} (js/test/build.sh builds it)`);
  process.exit(2);
}
const { MnemoClient, OPERATIONS, RANGES } = await import(pathToFileURL(entry).href);
const client = new MnemoClient({ baseURL: url });
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

// The method's arguments: its path parameters, then the others as one object when the method
// takes them (its length counts path parameters, params and options).
function call(op, params) {
  const spec = OPERATIONS[op];
  const method = client[camel(op)];
  if (!spec || typeof method !== 'function') throw new Error(`no method ${camel(op)} for ${op}`);
  if (spec.body === 'ndjson') throw new Error(`${camel(op)} takes a JSON Lines body, not parameters`);
  const args = spec.pathParams.map((p) => params[p]);
  const rest = Object.fromEntries(Object.entries(params).filter(([k]) => !spec.pathParams.includes(k)));
  if (method.length === args.length + 2) args.push(rest);
  else if (Object.keys(rest).length) throw new Error(`${camel(op)} takes no parameters besides ${spec.pathParams}`);
  return method.apply(client, args);
}

for (const [op, , , , params] of JSON.parse(readFileSync(0, 'utf8'))) {
  let line;
  try {
    await call(op, params);
    line = { threw: null };
  } catch (e) {
    line = { threw: e?.name ?? String(e), message: String(e?.message ?? e) };
  }
  console.log(JSON.stringify(line));
}
console.log(JSON.stringify({ ranges: RANGES }));
