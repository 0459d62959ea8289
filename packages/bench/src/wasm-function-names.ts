import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A reader of the WebAssembly binary format's LEB128 integers and names, over one buffer. */
class WasmReader {
  constructor(
    private readonly bytes: Uint8Array,
    public at = 0,
  ) {}

  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) throw new Error('wasm: unexpected end');
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
  }

  name(): string {
    const length = this.u32();
    const text = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, length).toString('utf8');
    this.at += length;
    return text;
  }
}

/**
 * Function names of a WebAssembly module by the index V8 prints in a profile
 * (`wasm-function[N]`): from its "name" section where it has one, else from its exports.
 */
export function wasmFunctionNames(bytes: Uint8Array): Map<number, string> {
  const names = new Map<number, string>();
  const exported = new Map<number, string>();
  const reader = new WasmReader(bytes, 8);
  while (reader.at < bytes.length) {
    const id = bytes[reader.at++];
    const size = reader.u32();
    const end = reader.at + size;
    if (id === 0 && reader.name() === 'name') {
      while (reader.at < end) {
        const sub = bytes[reader.at++];
        const subSize = reader.u32();
        const subEnd = reader.at + subSize;
        if (sub === 1) for (let n = reader.u32(); n > 0; n--) names.set(reader.u32(), reader.name());
        reader.at = subEnd;
      }
    } else if (id === 7) {
      for (let n = reader.u32(); n > 0; n--) {
        const name = reader.name();
        const kind = bytes[reader.at++];
        const index = reader.u32();
        if (kind === 0 && !exported.has(index)) exported.set(index, name);
      }
    }
    reader.at = end;
  }
  for (const [index, name] of exported) if (!names.has(index)) names.set(index, name);
  return names;
}

/** The embedded database engine's function names, read from its module beside the db package (empty if it is not there). */
export function engineFunctionNames(): Map<number, string> {
  const file = join(
    dirname(fileURLToPath(import.meta.url)),
    '../../db/node_modules/@electric-sql/pglite/dist/pglite.wasm',
  );
  return existsSync(file) ? wasmFunctionNames(readFileSync(file)) : new Map();
}
