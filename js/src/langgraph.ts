// langgraph.ts — MnemoSaver, a LangGraph.js checkpointer (BaseCheckpointSaver) keeping a graph's
// checkpoints and pending writes in `mnemo serve` (docs/checkpoints.md). A thread is a session:
// its thread_id any string (the session's key in `namespace`) or a session's UUID, made by its
// first checkpoint. Values are the serializer's bytes in base64; getTuple() and list() return what
// LangGraph's MemorySaver returns for the same calls (docs/js.md). MnemoStore, LangGraph's
// long-term memory store over mnemo's documents, is in langgraph_store.ts and exported here.
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver, TASKS, WRITES_IDX_MAP, copyCheckpoint, getCheckpointId, maxChannelVersion,
  type ChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata,
  type CheckpointPendingWrite, type CheckpointTuple, type PendingWrite, type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { CLIENT_OPTIONS, MnemoClient, type ClientOptions } from './client.js';
import { NotFoundError } from './errors.js';
import { RANGES } from './generated.js';
import { checkAdapterOptions, checkOptions, given, pick, shown } from './options.js';

export { MnemoStore, type MnemoPutOperation, type MnemoStoreOptions, type MnemoStoreTtlConfig } from './langgraph_store.js';

export interface MnemoSaverOptions extends ClientOptions {
  /** the namespace the threads are made and found in (default: the server's default, or the API
   * key's) */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
}

const SAVER_OPTIONS = [...CLIENT_OPTIONS, 'namespace', 'client'] as const;
const MAX_LIMIT = RANGES.checkpoint_list.limit.maximum; // a larger limit: all of them, cut here

/** A pending write as the checkpoint routes answer it: its value the serializer's bytes in base64. */
interface StoredWrite {
  task_id: string;
  task_path: string;
  idx: number;
  channel: string;
  type: string;
  value: string;
}

/** A checkpoint as the checkpoint routes answer it (docs/checkpoints.md), its pending writes in
 * LangGraph's order (task path, task id, idx). */
interface StoredCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: string;
  metadata: Record<string, unknown>;
  pending_writes: StoredWrite[];
}

/** Bytes as base64 (btoa takes a binary string, made in slices: one spread of a large array
 * overflows the stack). */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `v` as a string, non-empty unless `empty`, as MemorySaver requires the ids of a config (a
 * number is refused, not coerced). */
function checkString(what: string, name: string, v: unknown, empty = false): string {
  if (typeof v !== 'string' || (v === '' && !empty)) {
    throw new TypeError(`MnemoSaver.${what}: ${name} must be a ${empty ? '' : 'non-empty '}string, not ${shown(v)}`);
  }
  return v;
}

export class MnemoSaver extends BaseCheckpointSaver {
  readonly client: MnemoClient;
  readonly namespace: string | undefined;

  constructor(options: MnemoSaverOptions = {}, serde?: SerializerProtocol) {
    super(serde);
    checkOptions('MnemoSaver', options, SAVER_OPTIONS);
    options ??= {};
    checkAdapterOptions('MnemoSaver', options);
    if (options.client) {
      const unused = given(options, CLIENT_OPTIONS);
      if (unused.length) throw new TypeError(`MnemoSaver: ${unused.join(', ')}: options of the client, not used with \`client\` (give them to that client)`);
    }
    this.client = options.client ?? new MnemoClient(pick<ClientOptions>(options, CLIENT_OPTIONS));
    this.namespace = options.namespace ?? undefined;
  }

  /** The checkpoint of `config.configurable.checkpoint_id` (or `thread_ts`), else the newest of
   * the thread's `checkpoint_ns` (default ""); undefined when there is none, or no thread_id. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const thread = config.configurable?.thread_id;
    if (thread === undefined) return undefined;
    const thread_id = checkString('getTuple', 'configurable.thread_id', thread);
    const checkpoint_ns = checkString('getTuple', 'configurable.checkpoint_ns', config.configurable?.checkpoint_ns ?? '', true);
    const checkpoint_id = getCheckpointId(config);
    const found = await this.#get(thread_id, checkpoint_ns, checkpoint_id);
    if (!found) return undefined;
    // one asked for by id comes with the config it was asked with, as MemorySaver's
    return this.#tuple(found, thread_id, checkpoint_id ? config : { configurable: { thread_id, checkpoint_id: found.checkpoint_id, checkpoint_ns } });
  }

  /** The checkpoints of the thread (without thread_id: of every thread in the namespace), of
   * `checkpoint_ns` when given, newest first, with `before`, `filter` (metadata keys equal to
   * these values) and `limit` as MemorySaver takes them. */
  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const { before, limit, filter } = options ?? {};
    const thread = config.configurable?.thread_id;
    const thread_id = thread === undefined ? undefined : checkString('list', 'configurable.thread_id', thread);
    const ns = config.configurable?.checkpoint_ns;
    const checkpoint_ns = ns === undefined ? undefined : checkString('list', 'configurable.checkpoint_ns', ns, true);
    if (limit !== undefined && limit <= 0) return;
    const { checkpoints } = await this.client.checkpointList({
      thread_id,
      checkpoint_ns,
      checkpoint_id: config.configurable?.checkpoint_id || undefined,
      before: before?.configurable?.checkpoint_id || undefined,
      filter,
      limit: limit !== undefined && limit <= MAX_LIMIT ? limit : undefined,
      namespace: this.namespace,
    });
    for (const found of (checkpoints as unknown as StoredCheckpoint[]).slice(0, limit)) {
      // a thread asked for keeps the name it was asked by (its UUID, when the session has a key)
      const id = thread_id ?? found.thread_id;
      yield await this.#tuple(found, id, { configurable: { thread_id: id, checkpoint_ns: found.checkpoint_ns, checkpoint_id: found.checkpoint_id } });
    }
  }

  /** Saves `checkpoint` as the child of `config`'s checkpoint_id, making the thread's session
   * when nothing has its name yet. A thread's first checkpoint (no parent) keeps only the channel
   * values newVersions names, as LangGraph's database savers store them (a value no new version
   * was written for is not that checkpoint's); the others keep every value they are given, as
   * MemorySaver's do. */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const thread_id = checkString('put', 'configurable.thread_id', config.configurable?.thread_id);
    const checkpoint_ns = checkString('put', 'configurable.checkpoint_ns', config.configurable?.checkpoint_ns ?? '', true);
    const parent: unknown = config.configurable?.checkpoint_id;
    const stored = copyCheckpoint(checkpoint);
    if (!parent) {
      stored.channel_values = Object.fromEntries(Object.entries(stored.channel_values).filter(([k]) => Object.hasOwn(newVersions, k)));
    }
    const [type, bytes] = await this.serde.dumpsTyped(stored);
    await this.client.checkpointPut({
      thread_id,
      checkpoint_ns,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parent ? checkString('put', 'configurable.checkpoint_id', parent) : undefined,
      type,
      checkpoint: toBase64(bytes),
      metadata: await this.#metadataJson(metadata),
      namespace: this.namespace,
    });
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /** Saves the writes of task `taskId` against `config`'s checkpoint. A write of one of
   * LangGraph's special channels (an error, an interrupt, a resume) has that channel's negative
   * idx and replaces the task's earlier one; another keeps a stored write of its (task, idx), as
   * MemorySaver's do (the server applies the rule). */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const thread_id = checkString('putWrites', 'configurable.thread_id', config.configurable?.thread_id);
    const checkpoint_id = checkString('putWrites', 'configurable.checkpoint_id', config.configurable?.checkpoint_id);
    const checkpoint_ns = checkString('putWrites', 'configurable.checkpoint_ns', config.configurable?.checkpoint_ns ?? '', true);
    checkString('putWrites', 'taskId', taskId);
    if (writes.length === 0) return;
    const stored = await Promise.all(writes.map(async ([channel, value], i) => {
      const [type, bytes] = await this.serde.dumpsTyped(value);
      const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : i;
      return { task_id: taskId, task_path: taskPath ?? '', idx, channel, type, value: toBase64(bytes) };
    }));
    await this.client.checkpointPutWrites({ thread_id, checkpoint_ns, checkpoint_id, writes: stored, namespace: this.namespace });
  }

  /** Deletes the thread's checkpoints and pending writes, of every checkpoint_ns (the session and
   * its messages stay); nothing when there are none. */
  async deleteThread(threadId: string): Promise<void> {
    await this.client.checkpointDeleteThread({ thread_id: checkString('deleteThread', 'threadId', threadId), namespace: this.namespace });
  }

  /** A checkpoint of the thread (`checkpoint_id` "": the newest of checkpoint_ns), or undefined
   * when the thread or the checkpoint is missing. */
  async #get(thread_id: string, checkpoint_ns: string, checkpoint_id: string): Promise<StoredCheckpoint | undefined> {
    try {
      const { checkpoint } = await this.client.checkpointGet({ thread_id, checkpoint_ns, checkpoint_id: checkpoint_id || undefined, namespace: this.namespace });
      return checkpoint as unknown as StoredCheckpoint;
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  /** A stored checkpoint as LangGraph's tuple, read back by the serializer. */
  async #tuple(found: StoredCheckpoint, thread_id: string, config: RunnableConfig): Promise<CheckpointTuple> {
    const checkpoint: Checkpoint = await this.serde.loadsTyped(found.type, fromBase64(found.checkpoint));
    const parent = found.parent_checkpoint_id ?? undefined;
    if (checkpoint.v < 4 && parent !== undefined) await this.#migratePendingSends(checkpoint, thread_id, found.checkpoint_ns, parent);
    const tuple: CheckpointTuple = {
      config,
      checkpoint,
      metadata: await this.serde.loadsTyped('json', JSON.stringify(found.metadata)),
      pendingWrites: await Promise.all(found.pending_writes.map(async (w): Promise<CheckpointPendingWrite> => [w.task_id, w.channel, await this.#value(w)])),
    };
    if (parent !== undefined) tuple.parentConfig = { configurable: { thread_id, checkpoint_ns: found.checkpoint_ns, checkpoint_id: parent } };
    return tuple;
  }

  #value(w: StoredWrite): Promise<unknown> {
    return this.serde.loadsTyped(w.type, fromBase64(w.value));
  }

  /** A checkpoint of LangGraph's format before v4 kept its pending sends as its parent's writes
   * to TASKS: they become its TASKS channel value, as MemorySaver's _migratePendingSends does. */
  async #migratePendingSends(checkpoint: Checkpoint, thread_id: string, checkpoint_ns: string, parentId: string): Promise<void> {
    const parent = await this.#get(thread_id, checkpoint_ns, parentId);
    const sends = await Promise.all((parent?.pending_writes ?? []).filter((w) => w.channel === TASKS).map((w) => this.#value(w)));
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends;
    checkpoint.channel_versions ??= {};
    checkpoint.channel_versions[TASKS] = Object.keys(checkpoint.channel_versions).length > 0
      ? maxChannelVersion(...Object.values(checkpoint.channel_versions))
      : this.getNextVersion(undefined);
  }

  /** Metadata as the server keeps it: the JSON the serializer writes for it (what its loadsTyped
   * reads back the same: an undefined value as its record), whose keys the list filter reads. */
  async #metadataJson(metadata: CheckpointMetadata): Promise<Record<string, unknown>> {
    const [type, bytes] = await this.serde.dumpsTyped(metadata);
    if (type !== 'json') throw new TypeError(`MnemoSaver: the serializer wrote the checkpoint metadata as '${type}': mnemo keeps metadata as JSON`);
    return JSON.parse(new TextDecoder().decode(bytes));
  }
}
