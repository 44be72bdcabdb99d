// append.ts — an append that creates a missing session, shared by the adapters. An append
// cannot name a namespace (`create: true` makes the session in the default one, or the API
// key's): without a namespace that is one request; with one, a missing session is created in
// it first, then appended to.
import type { MnemoClient } from './client.js';
import { ConflictError, NotFoundError } from './errors.js';
import type { MessageInput } from './types.js';

const CREATE_TRIES = 3; // append, create on a 404, append again: how many rounds before giving up

/** Appends `messages` to session `id` in one transaction, creating the session when missing
 * (in `namespace` when given). */
export async function appendCreating(client: MnemoClient, id: string, messages: MessageInput[], namespace: string | undefined): Promise<void> {
  if (namespace === undefined) {
    await client.append(id, { create: true, messages });
    return;
  }
  for (let round = 1; ; round++) {
    try {
      await client.append(id, { messages });
      return;
    } catch (e) {
      if (!(e instanceof NotFoundError) || round === CREATE_TRIES) throw e;
    }
    try {
      await client.sessionCreate({ id, namespace });
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e; // 409: another writer made it meanwhile
    }
  }
}
