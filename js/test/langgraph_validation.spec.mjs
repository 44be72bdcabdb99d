// langgraph_validation.spec.mjs — LangGraph's conformance suite for checkpointers
// (@langchain/langgraph-checkpoint-validation, as published) on MnemoSaver against a real `mnemo
// serve`: a vitest file, as the suite is written for Jest-like runners, run by langgraph.test.mjs
// (the package's validate-checkpointer CLI cannot load an initializer in 1.1.1). Each checkpointer
// gets a namespace of its own: one instance lists nothing another stored, as the suite requires.
import assert from 'node:assert/strict';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { MnemoSaver } from '@mnemo/client/langgraph';
import { dbTarget, startServer, stopServer } from './server.mjs';

let server;

validate({
  checkpointerName: 'MnemoSaver',
  beforeAllTimeout: 60_000, // a PostgreSQL database is made first in the pg/ variant
  async beforeAll() {
    server = await startServer(dbTarget('langgraph-validation'));
  },
  async afterAll() {
    assert.equal(await stopServer(server.proc), 0);
  },
  createCheckpointer: () => new MnemoSaver({ baseURL: server.url, namespace: `lg-${crypto.randomUUID()}` }),
});
