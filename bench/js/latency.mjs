// latency.mjs — the latency of @mnemo/client's append and context against a running
// `mnemo serve`: N sequential calls of each on one keep-alive connection (Node's fetch pools
// per origin; one call at a time uses one connection), median and p99 in microseconds.
//   node bench/js/latency.mjs http://127.0.0.1:8765 [N=2000] [max_tokens=4096]
// Needs the package built (cd js && npm ci && npm run build).
import { MnemoClient } from '../../js/dist/index.js';

const [url = 'http://127.0.0.1:8765', nArg = '2000', budgetArg = '4096'] = process.argv.slice(2);
const n = Number(nArg), maxTokens = Number(budgetArg);
const client = new MnemoClient({ baseURL: url, maxRetries: 0 });

function summary(name, us) {
  us.sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(q * us.length))];
  console.log(`${name.padEnd(8)} n=${us.length} median=${at(0.5).toFixed(0)} us p99=${at(0.99).toFixed(0)} us max=${us.at(-1).toFixed(0)} us`);
}

async function measure(fn) {
  const us = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    us.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return us;
}

const { session } = await client.sessionCreate({ title: 'bench/js' });
for (let i = 0; i < 50; i++) await client.append(session.id, { role: 'user', content: 'warm up' }); // connection, caches
const text = 'The quick brown fox jumps over the lazy dog; a typical chat turn of a few dozen tokens. '.repeat(2);
summary('append', await measure((i) => client.append(session.id, { role: i % 2 ? 'assistant' : 'user', content: `${i} ${text}` })));
summary('context', await measure(() => client.context(session.id, { max_tokens: maxTokens })));
await client.sessionDelete(session.id);
