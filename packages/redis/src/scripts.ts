import { LuaScript } from './script.js';
import { LUA } from './lua/scripts.generated.js';

/** Every Lua script of the binding; the sources live in `src/lua/*.lua`. */
export const SCRIPTS = {
  zsetPush: new LuaScript(LUA.zsetPush),
  zsetReserve: new LuaScript(LUA.zsetReserve),
  zsetRelease: new LuaScript(LUA.zsetRelease),
  zsetDeadLetter: new LuaScript(LUA.zsetDeadLetter),
  zsetGiveBack: new LuaScript(LUA.zsetGiveBack),
  zsetBegin: new LuaScript(LUA.zsetBegin),
  legacyReserve: new LuaScript(LUA.legacyReserve),
  legacyRetry: new LuaScript(LUA.legacyRetry),
  legacyDeadLetter: new LuaScript(LUA.legacyDeadLetter),
  legacyGiveBack: new LuaScript(LUA.legacyGiveBack),
  legacyCleanup: new LuaScript(LUA.legacyCleanup),
  purge: new LuaScript(LUA.purge),
  renew: new LuaScript(LUA.renew),
} as const;
