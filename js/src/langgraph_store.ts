// langgraph_store.ts — MnemoStore, a LangGraph.js store (BaseStore) keeping a graph's long-term
// memory as documents of `mnemo serve` (docs/documents.md): LangGraph's namespace tuple is a
// document's path, its labels joined by '.'. batch() answers what InMemoryStore answers for the
// same operations, except for orders and semantic search (docs/js.md); get, search, put, delete
// and listNamespaces are BaseStore's, over batch(). Exported by langgraph.ts.
import {
  BaseStore, validateNamespace,
  type GetOperation, type Item, type ListNamespacesOperation, type MatchCondition, type Operation,
  type OperationResults, type PutOperation, type SearchItem, type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import { CLIENT_OPTIONS, MnemoClient, type ClientOptions } from './client.js';
import { NotFoundError } from './errors.js';
import { RANGES } from './generated.js';
import { checkAdapterOptions, checkKind, checkOptions, checkWhole, given, pick, shown } from './options.js';

/** Time to live, as LangGraph's TTLConfig: minutes. */
export interface MnemoStoreTtlConfig {
  /** the time to live of a put that names none (default: none, documents stay) */
  defaultTtl?: number;
  /** whether get and search start the time to live of what they return again (default true) */
  refreshOnRead?: boolean;
}

export interface MnemoStoreOptions extends ClientOptions {
  /** mnemo's namespace the documents are kept in (default: the server's default, or the API
   * key's); not LangGraph's namespace tuple, which is a document's path */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
  ttl?: MnemoStoreTtlConfig;
}

/** A PutOperation with LangGraph Python's `ttl`: minutes, null never (default: the store's). */
export interface MnemoPutOperation extends PutOperation {
  ttl?: number | null;
}

const STORE_OPTIONS = [...CLIENT_OPTIONS, 'namespace', 'client', 'ttl'] as const;
const TTL_OPTIONS = ['defaultTtl', 'refreshOnRead'] as const;
const SEARCH_PAGE = RANGES.document_search.limit.maximum; // a larger limit: pages of this many
const PATHS_PAGE = RANGES.document_paths.limit.maximum;
const MAX_TTL_MS = RANGES.document_put.ttl_ms.maximum;

/** A document as the document routes answer it. */
interface StoredDocument {
  path: string;
  key: string;
  value: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  score: number | null;
}

/** Minutes (a positive number) as the whole milliseconds the server takes, at least 1 (0 there
 * is "never"); undefined and null pass through. */
function ttlMs(what: string, name: string, v: unknown): number | null | undefined {
  if (v === undefined || v === null) return v;
  const message = `${what}: ${name} must be a positive number of minutes, not ${shown(v)}`;
  if (typeof v !== 'number' || Number.isNaN(v)) throw new TypeError(message);
  const ms = Math.ceil(v * 60_000);
  if (!(v > 0) || ms > MAX_TTL_MS) throw new RangeError(`${message} (at most ${MAX_TTL_MS / 60_000})`);
  return ms;
}

/** A namespace tuple as a document path (validateNamespace refuses '.' and empty labels). */
const pathOf = (namespace: string[]): string => namespace.join('.');

function toItem(d: StoredDocument): Item {
  return { value: d.value, key: d.key, namespace: d.path.split('.'), createdAt: new Date(d.created_at), updatedAt: new Date(d.updated_at) };
}

/** The labels of one prefix and one suffix condition (InMemoryStore requires every condition to
 * hold; the server takes one of each). */
function conditions(list: MatchCondition[] | undefined): { prefix?: string; suffix?: string } {
  const out: { prefix?: string; suffix?: string } = {};
  for (const { matchType, path } of list ?? []) {
    if (matchType !== 'prefix' && matchType !== 'suffix') throw new TypeError(`MnemoStore.batch: unknown matchType ${shown(matchType)}`);
    if (out[matchType] !== undefined) throw new TypeError(`MnemoStore.batch: one ${matchType} condition at most`);
    validateNamespace(path, { allowEmpty: true, allowReservedRoot: true });
    if (path.length) out[matchType] = pathOf(path);
  }
  return out;
}

/** `limit` items from `offset`, fetched in pages of at most `page` (the server's largest). */
async function paged<T>(limit: number, offset: number, page: number, fetch: (limit: number, offset: number) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  while (out.length < limit) {
    const n = Math.min(limit - out.length, page);
    const got = await fetch(n, offset + out.length);
    out.push(...got);
    if (got.length < n) break;
  }
  return out;
}

export class MnemoStore extends BaseStore {
  readonly client: MnemoClient;
  readonly namespace: string | undefined;
  readonly #defaultTtlMs: number | undefined;
  readonly #refreshOnRead: boolean;

  constructor(options: MnemoStoreOptions = {}) {
    super();
    checkOptions('MnemoStore', options, STORE_OPTIONS);
    options ??= {};
    checkAdapterOptions('MnemoStore', options);
    if (options.client) {
      const unused = given(options, CLIENT_OPTIONS);
      if (unused.length) throw new TypeError(`MnemoStore: ${unused.join(', ')}: options of the client, not used with \`client\` (give them to that client)`);
    }
    checkKind('MnemoStore', 'ttl', options.ttl, (t) => typeof t === 'object' && !Array.isArray(t), 'an object');
    const ttl = options.ttl ?? {};
    checkOptions('MnemoStore: ttl', ttl, TTL_OPTIONS);
    checkKind('MnemoStore', 'ttl.refreshOnRead', ttl.refreshOnRead, (b) => typeof b === 'boolean', 'true or false');
    this.#defaultTtlMs = ttlMs('MnemoStore', 'ttl.defaultTtl', ttl.defaultTtl) ?? undefined;
    this.#refreshOnRead = ttl.refreshOnRead ?? true;
    this.client = options.client ?? new MnemoClient(pick<ClientOptions>(options, CLIENT_OPTIONS));
    this.namespace = options.namespace ?? undefined;
  }

  /** BaseStore's put, with a fifth argument: `ttl` in minutes (null: never; absent: the store's
   * `ttl.defaultTtl`), as LangGraph Python's put takes it. */
  override async put(namespace: string[], key: string, value: Record<string, unknown>, index?: false | string[], options?: { ttl?: number | null }): Promise<void> {
    checkOptions('MnemoStore.put', options, ['ttl']);
    validateNamespace(namespace);
    await this.batch([{ namespace, key, value, index, ttl: options?.ttl }]);
  }

  /** Every operation's result, in their order. As InMemoryStore's, the reads see the store as it
   * was before the batch, and of several puts of one item the last is the one made; nothing is
   * sent when an operation is refused. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const answers: Array<() => Promise<unknown>> = []; // in the operations' order
    const puts = new Map<string, MnemoPutOperation>();
    for (const op of operations) {
      if ('namespacePrefix' in op) {
        validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
        checkWhole('MnemoStore.search', 'limit', op.limit, 0);
        checkWhole('MnemoStore.search', 'offset', op.offset, 0);
        answers.push(() => this.#search(op));
      } else if ('namespace' in op) {
        validateNamespace(op.namespace, { allowReservedRoot: true });
        if ('value' in op) {
          ttlMs('MnemoStore.put', 'ttl', (op as MnemoPutOperation).ttl);
          puts.set(JSON.stringify([op.namespace, op.key]), op);
          answers.push(async () => null); // as InMemoryStore's
        } else {
          answers.push(() => this.#get(op));
        }
      } else if ('matchConditions' in op || 'limit' in op || 'maxDepth' in op) {
        const where = conditions(op.matchConditions);
        checkWhole('MnemoStore.listNamespaces', 'limit', op.limit, 0);
        checkWhole('MnemoStore.listNamespaces', 'offset', op.offset, 0);
        checkWhole('MnemoStore.listNamespaces', 'maxDepth', op.maxDepth, 1);
        answers.push(() => this.#paths(op, where));
      } else {
        throw new TypeError(`MnemoStore.batch: not a store operation: ${shown(op)}`);
      }
    }
    const results = await Promise.all(answers.map((answer) => answer()));
    await Promise.all([...puts.values()].map((op) => this.#put(op)));
    return results as OperationResults<Op>;
  }

  async #get(op: GetOperation): Promise<Item | null> {
    try {
      const { document } = await this.client.documentGet({ path: pathOf(op.namespace), key: op.key, refresh_ttl: this.#refreshOnRead, namespace: this.namespace });
      return toItem(document as unknown as StoredDocument);
    } catch (e) {
      if (e instanceof NotFoundError) return null;
      throw e;
    }
  }

  /** A search; its score undefined when the server has none, as InMemoryStore's. */
  #search(op: SearchOperation): Promise<SearchItem[]> {
    return paged(op.limit ?? 10, op.offset ?? 0, SEARCH_PAGE, async (limit, offset) => {
      const { documents } = await this.client.documentSearch({
        prefix: pathOf(op.namespacePrefix) || undefined,
        filter: op.filter ?? undefined,
        query: op.query || undefined,
        limit,
        offset,
        refresh_ttl: this.#refreshOnRead,
        namespace: this.namespace,
      });
      return (documents as unknown as StoredDocument[]).map((d) => ({ ...toItem(d), score: d.score ?? undefined }));
    });
  }

  /** Namespaces in the byte order of their paths, each cut to maxDepth labels. */
  #paths(op: ListNamespacesOperation, where: { prefix?: string; suffix?: string }): Promise<string[][]> {
    return paged(op.limit ?? Infinity, op.offset ?? 0, PATHS_PAGE, async (limit, offset) => {
      const { paths } = await this.client.documentPaths({ ...where, max_depth: op.maxDepth, limit, offset, namespace: this.namespace });
      return paths.map((p) => p.split('.'));
    });
  }

  async #put(op: MnemoPutOperation): Promise<void> {
    const path = pathOf(op.namespace);
    if (op.value === null) {
      await this.client.documentDelete({ path, key: op.key, namespace: this.namespace });
      return;
    }
    const ttl = op.ttl === undefined ? this.#defaultTtlMs : ttlMs('MnemoStore.put', 'ttl', op.ttl);
    await this.client.documentPut({ path, key: op.key, value: op.value, index: op.index ?? undefined, ttl_ms: ttl ?? undefined, namespace: this.namespace });
  }
}
