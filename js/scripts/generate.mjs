#!/usr/bin/env node
// generate.mjs — writes src/generated.ts (parameter and result types and one method per
// operation, named as the operation in camelCase, and a deprecated one per older name the
// document lists, x-mnemo-aliases: docs/names.md) from the OpenAPI document `mnemo serve` makes
// from its operation table (app/server/ops.c), so the client cannot drift from the server. Run
// by `npm run build`.
//
// Where the document comes from, first match wins:
//   MNEMO_OPENAPI=<file or http URL>   a saved /openapi.json, or a running server's
//   MNEMO=<path of the mnemo binary>    starts `mnemo serve` on a scratch database, port 0
//   ../build/mnemo, then `mnemo` on PATH (the same, with the binary found there)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'src', 'generated.ts');

// Result properties the table only declares as `object`: the hand-written shapes in src/types.ts
// (the CLI's --json shapes, docs/cli.md).
const REFINE = {
  'session': 'Session',
  'sessions[]': 'Session',
  'append.messages[]': 'Message',
  'history.messages[]': 'Message',
  'context_build.messages[]': 'ContextMessage',
  'search.hits[]': 'SearchHit',
  'events.events[]': 'SessionEvent',
  'summary_get.summary': 'Summary',
  'stats': 'Record<string, unknown>',
};
// Append's message fields are typed by MessageInput (src/types.ts), which the schema's
// properties describe one for one; a batch is `messages: MessageInput[]`.
const PARAM_REFINE = { 'append.messages[]': 'MessageInput', 'append.tool_calls': 'ToolCall[]' };

async function loadDocument() {
  const src = process.env.MNEMO_OPENAPI;
  if (src) {
    if (/^https?:/.test(src)) return (await fetch(new URL('/openapi.json', src))).json();
    return JSON.parse(readFileSync(src, 'utf8'));
  }
  const candidates = [process.env.MNEMO, join(here, '..', '..', 'build', 'mnemo'), 'mnemo'].filter(Boolean);
  const bin = candidates.find((c) => c === 'mnemo' || existsSync(c));
  return fromServer(bin);
}

// Starts `mnemo serve` on a scratch database and a free loopback port, fetches the document.
function fromServer(bin) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-gen-'));
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, ['--db', join(dir, 'gen.db'), 'serve', '--listen', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
    });
    let buf = '', errBuf = '';
    const done = (err, doc) => {
      proc.removeAllListeners('exit');
      proc.kill('SIGTERM');
      proc.on('exit', () => {
        rmSync(dir, { recursive: true, force: true });
        err ? reject(err) : resolve(doc);
      });
    };
    proc.on('error', (e) => reject(new Error(`generate: cannot run ${bin} (set MNEMO or MNEMO_OPENAPI): ${e.message}`)));
    proc.on('exit', (code) => reject(new Error(`generate: ${bin} serve exited with ${code}: ${errBuf}`)));
    proc.stderr.on('data', (d) => { errBuf += d; });
    proc.stdout.on('data', async (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0 || buf.length - d.length > nl) return;
      try {
        const res = await fetch(new URL('/openapi.json', buf.slice(0, nl)));
        done(null, await res.json());
      } catch (e) {
        done(e);
      }
    });
  });
}

const pascal = (s) => s.replace(/(^|_)([a-z])/g, (_, __, c) => c.toUpperCase());
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const doc = (text, indent) => (text ? `${indent}/** ${text.replace(/\*\//g, '* /')} */\n` : '');

// A JSON Schema (the subset ops.c writes) as a TypeScript type. `key` names the place in the
// operation ("append.messages[]"), looked up in `refine` with and without the operation's name.
function tsType(schema, refine, key) {
  const refined = refine[key] ?? refine[key.slice(key.indexOf('.') + 1)];
  if (key.includes('.') && refined) return refined;
  if (!key.includes('.') && refine[key]) return refine[key];
  if (!schema || Object.keys(schema).length === 0) return 'unknown';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return 'unknown';
  return types.map((t) => {
    switch (t) {
      case 'string': return 'string';
      case 'integer': case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'null': return 'null';
      case 'array': {
        const item = tsType(schema.items, refine, `${key}[]`);
        return /[ |]/.test(item) ? `Array<${item}>` : `${item}[]`;
      }
      case 'object': return objectType(schema, refine, key, '');
      default: return 'unknown';
    }
  }).join(' | ');
}

function objectType(schema, refine, key, indent) {
  const props = schema.properties || {};
  const names = Object.keys(props);
  if (names.length === 0) return 'Record<string, unknown>';
  const req = new Set(schema.required || []);
  const depth = indent + '  '.repeat(key.split('.').length);
  const lines = names.map((n) => {
    const t = tsType(props[n], refine, `${key}.${n}`);
    return `${doc(props[n].description, depth)}${depth}${n}${req.has(n) ? '' : '?'}: ${t};`;
  });
  return `{\n${lines.join('\n')}\n${depth.slice(2)}}`;
}

function operations(openapi) {
  const ops = [];
  for (const [path, item] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const params = {}, required = [], pathParams = [];
      for (const p of op.parameters || []) {
        if (p.in === 'path') pathParams.push(p.name);
        else {
          params[p.name] = { ...p.schema };
          if (p.required) required.push(p.name);
        }
      }
      const content = op.requestBody?.content || {};
      let body = 'none';
      if (content['application/json']) {
        body = 'json';
        const s = content['application/json'].schema;
        Object.assign(params, s.properties);
        required.push(...(s.required || []));
      } else if (content['application/x-ndjson']) {
        body = 'ndjson';
      }
      const [status, ok] = Object.entries(op.responses).find(([code]) => /^2/.test(code));
      const stream = Boolean(ok.content['application/x-ndjson']);
      ops.push({
        name: op.operationId, method: method.toUpperCase(), path, summary: op.summary,
        pathParams, params: { type: 'object', properties: params, required }, body, stream,
        status: Number(status), result: stream ? null : ok.content['application/json'].schema,
        aliases: op['x-mnemo-aliases'] || [],
      });
    }
  }
  return ops;
}

// The JSON types of a query operation's parameters, as a TypeScript literal: { limit: ['integer'] }
// (a parameter of any type, declared without one, is left out: nothing to check).
function queryTypes(op, props) {
  if (op.body !== 'none') return '{}';
  const entries = Object.entries(props)
    .map(([n, s]) => [n, Array.isArray(s.type) ? s.type : s.type ? [s.type] : []])
    .filter(([, types]) => types.length > 0)
    .map(([n, types]) => `${n}: [${types.map((t) => `'${t}'`).join(', ')}]`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}

function render(openapi) {
  const ops = operations(openapi);
  const out = [];
  out.push(`// generated.ts — GENERATED by scripts/generate.mjs from mnemo ${openapi.info.version}'s /openapi.json`);
  out.push('// (the operation table, app/server/ops.c). Do not edit: `npm run build` writes it again.');
  out.push("import type { ContextMessage, Message, MessageInput, SearchHit, Session, SessionEvent, Summary, ToolCall } from './types.js';");
  out.push('');
  out.push('/** How one operation travels over HTTP. */');
  out.push('export interface OperationSpec {');
  out.push("  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';");
  out.push('  path: string;');
  out.push('  pathParams: readonly string[];');
  out.push("  /** json: parameters as a JSON body; ndjson: a JSON Lines text body; none: the query string */");
  out.push("  body: 'json' | 'ndjson' | 'none';");
  out.push('  /** the result is JSON Lines text (streamed), not a JSON object */');
  out.push('  stream: boolean;');
  out.push('  status: number;');
  out.push("  /** body none: each parameter's JSON types (the first is the one the server names), checked");
  out.push('   * before they become query text, which the server converts ("5", "true") */');
  out.push('  query: Readonly<Record<string, readonly ParamType[]>>;');
  out.push('}');
  out.push('');
  out.push('/** A parameter\'s JSON type, as the table declares it. */');
  out.push("export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';");
  out.push('');
  out.push('/** Per-call options: headers such as Idempotency-Key, an AbortSignal, a timeout. */');
  out.push('export interface RequestOptions {');
  out.push('  headers?: Record<string, string>;');
  out.push('  signal?: AbortSignal;');
  out.push('  timeoutMs?: number;');
  out.push('  maxRetries?: number;');
  out.push('}');
  out.push('');
  const specs = [];
  for (const op of ops) {
    const P = pascal(op.name);
    const props = { ...op.params.properties };
    for (const p of op.pathParams) delete props[p];
    const schema = { type: 'object', properties: props, required: op.params.required.filter((r) => !op.pathParams.includes(r)) };
    out.push(`/** Parameters of \`${op.name}\` (${op.method} ${op.path}). */`);
    out.push(`export type ${P}Params = ${objectType(schema, PARAM_REFINE, op.name, '')};`);
    out.push('');
    const resultType = op.stream ? 'string' : tsType(op.result, REFINE, op.name);
    out.push(`/** Result of \`${op.name}\`. */`);
    out.push(`export type ${P}Result = ${resultType};`);
    out.push('');
    for (const alias of op.aliases) {
      out.push(`/** @deprecated the older name of ${P}Params (docs/names.md) */`);
      out.push(`export type ${pascal(alias)}Params = ${P}Params;`);
      out.push(`/** @deprecated the older name of ${P}Result (docs/names.md) */`);
      out.push(`export type ${pascal(alias)}Result = ${P}Result;`);
      out.push('');
    }
    specs.push(`  ${op.name}: { method: '${op.method}', path: '${op.path}', pathParams: ${JSON.stringify(op.pathParams)}, body: '${op.body}', stream: ${op.stream}, status: ${op.status}, query: ${queryTypes(op, props)} },`);
  }
  out.push('/** The ranges the table declares for each operation\'s numeric parameters, for the');
  out.push(' * package\'s own paging and checks (a limit is written once: app/server/ops.c). */');
  out.push('export const RANGES = {');
  for (const op of ops) {
    const ranges = Object.entries(op.params.properties)
      .filter(([, s]) => 'minimum' in s || 'maximum' in s)
      .map(([n, s]) => `${n}: { minimum: ${s.minimum ?? null}, maximum: ${s.maximum ?? null} }`);
    if (ranges.length) out.push(`  ${op.name}: { ${ranges.join(', ')} },`);
  }
  out.push('} as const;');
  out.push('');
  out.push('/** Every operation of the server, by name. */');
  out.push('export const OPERATIONS = {');
  out.push(...specs);
  out.push('} as const satisfies Record<string, OperationSpec>;');
  out.push('');
  out.push('export type OperationName = keyof typeof OPERATIONS;');
  out.push('');
  out.push('/** One typed method per operation; MnemoClient supplies the transport. */');
  out.push('export abstract class Operations {');
  out.push('  protected abstract call(name: OperationName, pathArgs: string[], params: object | string | undefined, options?: RequestOptions): Promise<unknown>;');
  for (const op of ops) {
    const P = pascal(op.name);
    const args = op.pathParams.map((p) => `${camel(p)}: string | number`);
    const required = op.params.required.some((r) => !op.pathParams.includes(r));
    const hasParams = Object.keys(op.params.properties).some((p) => !op.pathParams.includes(p));
    let passed = 'undefined';
    if (op.body === 'ndjson') {
      args.push('body: string');
      passed = 'body';
    } else if (hasParams) {
      args.push(`params${required ? '' : '?'}: ${P}Params`);
      passed = 'params';
    }
    args.push('options?: RequestOptions');
    out.push('');
    out.push(`  /** ${op.summary.replace(/\*\//g, '* /')} \`${op.method} ${op.path}\` */`);
    out.push(`  ${camel(op.name)}(${args.join(', ')}): Promise<${P}Result> {`);
    out.push(`    return this.call('${op.name}', [${op.pathParams.map((p) => `String(${camel(p)})`).join(', ')}], ${passed}, options) as Promise<${P}Result>;`);
    out.push('  }');
    // the operation's older names (x-mnemo-aliases), kept as deprecated methods calling this one
    const names = args.map((a) => a.slice(0, a.search(/\??:/)));
    for (const alias of op.aliases) {
      out.push('');
      out.push(`  /** @deprecated the older name of {@link ${camel(op.name)}} (docs/names.md) */`);
      out.push(`  ${camel(alias)}(${args.join(', ')}): Promise<${P}Result> {`);
      out.push(`    return this.${camel(op.name)}(${names.join(', ')});`);
      out.push('  }');
    }
  }
  out.push('}');
  out.push('');
  return out.join('\n');
}

const openapi = await loadDocument();
writeFileSync(out, render(openapi));
console.log(`generate: ${Object.values(openapi.paths).reduce((n, p) => n + Object.keys(p).length, 0)} operations -> src/generated.ts`);
