import { createHash } from 'node:crypto';
import type { RedisClient } from './options.js';

/** A value a script takes as a key or an argument. */
export type ScriptArg = string | Buffer | number;

/** The Buffer-reply EVAL variants every ioredis client has at run time but does not declare. */
interface BufferEval {
  evalshaBuffer(sha: string, numKeys: number, ...rest: ScriptArg[]): Promise<unknown>;
  evalBuffer(source: string, numKeys: number, ...rest: ScriptArg[]): Promise<unknown>;
}

/**
 * One Lua script, run with EVALSHA and loaded with EVAL on NOSCRIPT (a fresh
 * server, a failover, a cluster node that has not seen it yet). Replies keep
 * Buffers so bodies stay byte-for-byte. The client is used as is: nothing is
 * defined on it, so a caller's own connection is left unchanged.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script; all keys must share one hash slot on Redis Cluster. */
  async run(client: RedisClient, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const redis = client as unknown as BufferEval;
    try {
      return await redis.evalshaBuffer(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.evalBuffer(this.source, keys.length, ...keys, ...args);
    }
  }

  /**
   * Runs the script with EVAL, source and all: never NOSCRIPT, so it runs in
   * the order it was sent on its connection, before any command sent after it
   * (a NOSCRIPT retry would run after them). For a short script whose effect
   * later commands rely on.
   */
  runInOrder(client: RedisClient, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    return (client as unknown as BufferEval).evalBuffer(this.source, keys.length, ...keys, ...args);
  }
}
