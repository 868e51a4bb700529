/**
 * Zip safety for uploaded packages (docs/scorm.md "Caps"). The package is a file on disk; its central
 * directory is read first (unzipper `Open.file`) and every entry is checked — count, names, types, declared sizes
 * and ratios — BEFORE anything is inflated. Entries are then inflated one at a time as streams whose bytes are
 * counted, so a size the directory lied about is caught while inflating, never after.
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Open, type File as CentralDirectoryEntry } from 'unzipper';
import { AppError } from '@lectern/errors';

const MiB = 1024 * 1024;

export const ZIP_CAPS = {
  /** Entries in the central directory. Real packages hold tens to a few thousand files. */
  maxEntries: 10_000,
  /** Sum of the declared inflated sizes: ten times the 100 MB upload limit. */
  maxTotalInflated: 1024 * MiB,
  /** Inflated ÷ compressed above which an entry (of at least `ratioFloor` bytes) is taken for a bomb. */
  maxRatio: 200,
  ratioFloor: 1 * MiB,
  /** Bytes the importer may inflate in all, whatever it reads (manifest, course.json, HTML). */
  maxBytesRead: 256 * MiB,
  /** Longest entry name. */
  maxNameLength: 1024,
} as const;

/** A package refused: 400 invalid_request with one issue whose `code` is stable (docs/scorm.md). */
export function refused(code: string, message: string, entry?: string): AppError {
  return new AppError('invalid_request', message, {
    issues: [{ code, path: entry === undefined ? ['package'] : ['package', entry], message }],
  });
}

export interface PackageEntry {
  /** The name as stored, `\` read as `/`. */
  name: string;
  size: number;
  compressedSize: number;
  raw: CentralDirectoryEntry;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** Why a raw entry name is unsafe, or null: absolute, drive-lettered, `..` segments, control characters. */
export function unsafeName(name: string): string | null {
  if (name.length === 0) return 'empty name';
  if (name.length > ZIP_CAPS.maxNameLength) return 'name too long';
  if (/[\u0000-\u001f]/.test(name)) return 'control character in name';
  const slashed = name.replaceAll('\\', '/');
  if (slashed.startsWith('/')) return 'absolute path';
  if (/^[A-Za-z]:/.test(slashed)) return 'absolute path';
  if (slashed.split('/').some((seg) => seg === '..')) return 'path escapes the package (..)';
  return null;
}

/** Finds the end-of-central-directory record in the file's tail; null when the file is not a zip. */
async function readEndOfDirectory(file: string): Promise<{ records: number; cdSize: number } | null> {
  const { size } = await stat(file);
  if (size < 22) return null;
  const tail = Math.min(size, 22 + 0xffff);
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(tail);
    await fh.read(buf, 0, tail, size - tail);
    for (let i = tail - 22; i >= 0; i--) {
      if (buf.readUInt32LE(i) === 0x06054b50) {
        return { records: buf.readUInt16LE(i + 10), cdSize: buf.readUInt32LE(i + 12) };
      }
    }
    return null;
  } finally {
    await fh.close();
  }
}

export class ZipPackage {
  private bytesRead = 0;
  private readonly lower = new Map<string, PackageEntry>();

  private constructor(readonly entries: ReadonlyMap<string, PackageEntry>) {
    for (const [name, e] of entries)
      if (!this.lower.has(name.toLowerCase())) this.lower.set(name.toLowerCase(), e);
  }

  /**
   * Opens and checks a package file. Throws `refused(...)` for: not a zip, too many entries, unsafe names,
   * symlinks, encrypted entries, unknown compression, declared sizes over the caps, suspicious ratios.
   */
  static async open(file: string): Promise<ZipPackage> {
    const end = await readEndOfDirectory(file);
    if (!end) throw refused('not_a_zip', 'The body is not a zip file');
    // 0xffff means a ZIP64 count; no package under 100 MB needs one, and it would be over the cap anyway.
    if (end.records > ZIP_CAPS.maxEntries)
      throw refused(
        'too_many_entries',
        `The package holds more than ${ZIP_CAPS.maxEntries.toLocaleString('en-US')} entries`,
      );
    let files: CentralDirectoryEntry[];
    try {
      files = (await Open.file(file)).files;
    } catch (err) {
      throw refused('not_a_zip', `The zip file is damaged (${(err as Error).message})`);
    }
    if (files.length > ZIP_CAPS.maxEntries)
      throw refused('too_many_entries', `The package holds more than ${ZIP_CAPS.maxEntries} entries`);
    const entries = new Map<string, PackageEntry>();
    let total = 0;
    for (const f of files) {
      const name = f.path;
      const unsafe = unsafeName(name);
      if (unsafe) {
        const code =
          unsafe === 'absolute path'
            ? 'absolute_path'
            : unsafe.startsWith('path escapes')
              ? 'zip_slip'
              : 'bad_name';
        throw refused(code, `Entry "${name.slice(0, 200)}": ${unsafe}`, name.slice(0, 200));
      }
      const mode = (f.externalFileAttributes >>> 16) & S_IFMT;
      if (mode === S_IFLNK) throw refused('symlink', `Entry "${name}" is a symbolic link`, name);
      if (f.flags & 0x1) throw refused('encrypted', `Entry "${name}" is encrypted`, name);
      if (f.compressionMethod !== 0 && f.compressionMethod !== 8)
        throw refused(
          'unsupported_compression',
          `Entry "${name}" uses compression method ${f.compressionMethod}; only stored and deflated entries are read`,
          name,
        );
      total += f.uncompressedSize;
      if (total > ZIP_CAPS.maxTotalInflated)
        throw refused(
          'inflated_too_large',
          `The package inflates to more than ${ZIP_CAPS.maxTotalInflated / MiB} MiB`,
        );
      if (
        f.uncompressedSize >= ZIP_CAPS.ratioFloor &&
        f.uncompressedSize > ZIP_CAPS.maxRatio * Math.max(f.compressedSize, 1)
      )
        throw refused(
          'compression_ratio',
          `Entry "${name}" inflates more than ${ZIP_CAPS.maxRatio} times its size (a zip bomb?)`,
          name,
        );
      const key = path.posix.normalize(name.replaceAll('\\', '/'));
      if (f.type === 'Directory' || key.endsWith('/')) continue;
      if (entries.has(key)) throw refused('duplicate_entry', `Entry "${name}" appears twice`, name);
      entries.set(key, { name: key, size: f.uncompressedSize, compressedSize: f.compressedSize, raw: f });
    }
    return new ZipPackage(entries);
  }

  /** An entry by path, exactly or, failing that, ignoring case (packages made on Windows). */
  find(name: string): PackageEntry | undefined {
    return this.entries.get(name) ?? this.lower.get(name.toLowerCase());
  }

  /**
   * Inflates one entry, counting bytes as they come: more than the directory declared → refused
   * (`size_mismatch`), more than `cap` or past the import's total → refused (`inflated_too_large`).
   */
  async read(entry: PackageEntry, cap: number): Promise<Buffer> {
    if (entry.size > cap)
      throw refused(
        'entry_too_large',
        `Entry "${entry.name}" is larger than ${Math.floor(cap / MiB)} MiB`,
        entry.name,
      );
    const chunks: Buffer[] = [];
    let n = 0;
    const stream = entry.raw.stream();
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        n += chunk.length;
        this.bytesRead += chunk.length;
        if (n > entry.size)
          throw refused(
            'size_mismatch',
            `Entry "${entry.name}" inflates to more than the ${entry.size} bytes it declares`,
            entry.name,
          );
        if (this.bytesRead > ZIP_CAPS.maxBytesRead)
          throw refused('inflated_too_large', `The package inflates to more than the import reads`);
        chunks.push(chunk);
      }
    } catch (err) {
      stream.destroy();
      if (err instanceof AppError) throw err;
      throw refused(
        'corrupt_entry',
        `Entry "${entry.name}" cannot be inflated (${(err as Error).message})`,
        entry.name,
      );
    }
    if (n !== entry.size)
      throw refused(
        'size_mismatch',
        `Entry "${entry.name}" inflates to ${n} bytes, not the ${entry.size} it declares`,
        entry.name,
      );
    return Buffer.concat(chunks);
  }
}
