/** The part of unzipper 0.12 the SCORM importer uses: the central directory of a zip file, entries as streams. */
declare module 'unzipper' {
  import type { Readable } from 'node:stream';
  export interface CentralDirectoryEntry {
    path: string;
    pathBuffer: Buffer;
    type: 'File' | 'Directory';
    versionMadeBy: number;
    flags: number;
    compressionMethod: number;
    compressedSize: number;
    uncompressedSize: number;
    externalFileAttributes: number;
    stream(password?: string): Readable;
  }
  export interface CentralDirectory {
    files: CentralDirectoryEntry[];
    numberOfRecords: number;
    sizeOfCentralDirectory: number;
  }
  export const Open: {
    file(path: string, options?: { padding?: number }): Promise<CentralDirectory>;
  };
}
