// The expanded size of a zip archive (xlsx, pptx and docx are zips), read from
// its central directory before anything is unpacked: a few kilobytes of
// compressed XML can expand to gigabytes (a zip bomb), and the readers'
// libraries unpack whole entries into memory. Each entry declares its size
// there; a Zip64 entry (sizes past 4 GiB) counts as too large.

import { IngestError } from '../errors.js';

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const END_SEARCH = 22 + 0xffff;

/** The sum of the entries' declared uncompressed sizes; undefined when `data` is not a zip archive. */
export function zipExpandedBytes(data: Buffer): number | undefined {
  const end = findEndRecord(data);
  if (end < 0) return undefined;
  const entries = data.readUInt16LE(end + 10);
  let at = data.readUInt32LE(end + 16);
  if (at === 0xffffffff) return Number.POSITIVE_INFINITY; // a Zip64 archive: past 4 GiB
  let total = 0;
  for (let i = 0; i < entries; i++) {
    if (at + 46 > data.length || data.readUInt32LE(at) !== DIRECTORY_ENTRY) return undefined;
    const size = data.readUInt32LE(at + 24);
    if (size === 0xffffffff) return Number.POSITIVE_INFINITY;
    total += size;
    at += 46 + data.readUInt16LE(at + 28) + data.readUInt16LE(at + 30) + data.readUInt16LE(at + 32);
  }
  return total;
}

function findEndRecord(data: Buffer): number {
  for (let at = data.length - 22; at >= Math.max(0, data.length - END_SEARCH); at--) {
    if (data.readUInt32LE(at) === END_OF_DIRECTORY) return at;
  }
  return -1;
}

/** OLE2 compound files: what Office writes for a password-protected document (and for .xls, .ppt, .doc). */
const COMPOUND_FILE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/**
 * Refuses, naming the file, an Office document (`what`, e.g. "an Excel workbook
 * (.xlsx)") that is password-protected, is no zip archive, or whose entries
 * would expand past `maxExpandedBytes` (default 256 MiB). Answers the size it
 * expands to.
 */
export function checkZip(data: Buffer, filename: string, what: string, maxExpandedBytes = 256 * 1024 * 1024): number {
  if (data.subarray(0, 8).equals(COMPOUND_FILE)) {
    throw new IngestError(
      'encrypted_file',
      `${filename} is password-protected (or in the older binary format): save it as ${what} without a password, then import it.`,
    );
  }
  const expanded = zipExpandedBytes(data);
  if (expanded === undefined) throw new IngestError('corrupt_file', `${filename} is not ${what}: it is not a zip archive.`);
  if (expanded > maxExpandedBytes) {
    throw new IngestError(
      'too_complex',
      `${filename} expands to ${mib(expanded)} MiB when unpacked; the limit is ${mib(maxExpandedBytes)} MiB. Split it into smaller files.`,
    );
  }
  return expanded;
}

function mib(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1048576).toFixed(1) : 'more than 4096';
}
