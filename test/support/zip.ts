/**
 * A small zip writer for tests that need packages no archiver would make: `../` and absolute names, symlink
 * entries, lying sizes, encrypted flags, bombs. Writes local headers, the central directory and its end record
 * as APPNOTE 6.3 describes (no ZIP64, no data descriptors).
 */
import zlib from 'node:zlib';

export interface ZipEntryInput {
  name: string;
  data: Buffer | string;
  /** `deflate` (default) or `store`. */
  method?: 'deflate' | 'store';
  /** Overrides the inflated size written in both headers (a lie). */
  declaredSize?: number;
  /** Unix mode (e.g. 0o120777 for a symlink), stored in the upper 16 bits of the external attributes. */
  unixMode?: number;
  /** General purpose flags (bit 0: encrypted). */
  flags?: number;
}

export function zipOf(entries: ZipEntryInput[], opts: { recordCount?: number } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const raw = typeof e.data === 'string' ? Buffer.from(e.data) : e.data;
    const method = e.method === 'store' ? 0 : 8;
    const body = method === 8 ? zlib.deflateRawSync(raw) : raw;
    const name = Buffer.from(e.name);
    const crc = zlib.crc32(raw);
    const size = e.declaredSize ?? raw.length;
    const flags = (e.flags ?? 0) | 0x800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(0, 10);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.unixMode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(opts.recordCount ?? entries.length, 8);
  end.writeUInt16LE(opts.recordCount ?? entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
