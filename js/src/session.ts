// session.ts — SessionRef, how the adapters name their session: a session's UUID, or any other
// string of the application's ("user-42-chat"), which mnemo keeps as the session's key in its
// namespace (docs/http-api.md, "Session keys"). The routes look a key up in the API key's
// namespace, else the default one (an append cannot name a namespace), and a URL path cannot
// carry every string; so a key goes as it is only without `namespace` and when a path can carry
// it, and otherwise is looked up once (session_resume takes the namespace and the key in its
// query) and the session's UUID is used. The session is made on the first write.
import { pathCarries, type MnemoClient } from './client.js';
import { ConflictError, NotFoundError } from './errors.js';
import type { MessageInput } from './types.js';

const TRIES = 3; // rounds of a write (append, create the missing session) before giving up
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i; // as the server parses one

export class SessionRef {
  /** the string the application named the session with */
  readonly name: string;
  readonly #client: MnemoClient;
  readonly #namespace: string | undefined;
  readonly #isUuid: boolean;
  /** whether the routes take `name` as it is */
  readonly #direct: boolean;
  /** the session's UUID once looked up or made (not direct); kept after a clear, so that the
   * next write makes the session again under the same UUID */
  #id: string | undefined;

  constructor(client: MnemoClient, name: string, namespace: string | undefined) {
    this.#client = client;
    this.name = name;
    this.#namespace = namespace;
    this.#isUuid = UUID.test(name);
    this.#direct = this.#isUuid || (namespace === undefined && pathCarries(name));
  }

  /** The session's UUID by its key, or undefined when no session has that key. */
  async #lookup(): Promise<string | undefined> {
    try {
      return (await this.#client.sessionResume({ namespace: this.#namespace, session_id: this.name })).session.id;
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  /** What the routes take: the name, or the session's UUID (undefined: no such session yet). */
  async #ref(): Promise<string | undefined> {
    if (this.#direct) return this.name;
    this.#id ??= await this.#lookup();
    return this.#id;
  }

  /** `fn` on the session; undefined when it is missing (a 404). A UUID found before and gone
   * since (another instance cleared the session, and a write made it again under another UUID)
   * is looked up again. */
  async use<T>(fn: (id: string) => Promise<T>): Promise<T | undefined> {
    for (;;) {
      const id = await this.#ref();
      if (id === undefined) return undefined;
      try {
        return await fn(id);
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
      if (this.#direct) return undefined;
      const again = await this.#lookup();
      if (again === undefined || again === id) return undefined;
      this.#id = again;
    }
  }

  /** Appends `messages` in one transaction, making the session when missing (in `namespace`
   * when given; without it the server's default namespace, or the API key's). */
  async append(messages: MessageInput[]): Promise<void> {
    for (let round = 1; ; round++) {
      if (this.#direct && this.#namespace === undefined) {
        try {
          await this.#client.append(this.name, { create: true, messages });
          return;
        } catch (e) {
          // two first writes of one key at once: the loser's create finds the key taken and its
          // append fails (404 or 409); the key names the winner's session now
          if (this.#isUuid || !(e instanceof NotFoundError || e instanceof ConflictError) || round === TRIES) throw e;
          continue;
        }
      }
      const id = (await this.#ref()) ?? (await this.#create());
      try {
        await this.#client.append(id, { messages });
        return;
      } catch (e) {
        if (!(e instanceof NotFoundError) || round === TRIES) throw e;
      }
      await this.#create();
    }
  }

  /** Makes the session in `namespace` (a key's under the UUID it had, when it had one), or finds
   * the one another writer made meanwhile (a 409); what the routes take. */
  async #create(): Promise<string> {
    const namespace = this.#namespace;
    try {
      if (this.#isUuid) {
        await this.#client.sessionCreate({ id: this.name, namespace });
        return this.name;
      }
      this.#id = (await this.#client.sessionCreate({ id: this.#id, key: this.name, namespace })).session.id;
      return this.#id;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      if (this.#isUuid) return this.name;
      this.#id = await this.#lookup();
      if (this.#id === undefined) throw e; // made and deleted again meanwhile: say so
      return this.#id;
    }
  }

  /** Deletes the session (nothing when it is missing). */
  async delete(): Promise<void> {
    await this.use((id) => this.#client.sessionDelete(id));
  }
}
