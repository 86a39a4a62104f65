// Plain file descriptors behind promises, for the few hot paths that open, read or write one file
// and close it: no FileHandle object to allocate, track and finalise per file.
import * as fs from 'node:fs';

function settle<T>(resolve: (value: T) => void, reject: (error: Error) => void) {
  return (error: NodeJS.ErrnoException | null, value: T) => (error ? reject(error) : resolve(value));
}

export function openFd(file: string, flags: number, mode?: number): Promise<number> {
  return new Promise((resolve, reject) => fs.open(file, flags, mode, settle(resolve, reject)));
}

export function fstatFd(fd: number): Promise<fs.Stats> {
  return new Promise((resolve, reject) => fs.fstat(fd, settle(resolve, reject)));
}

/** Reads up to `length` bytes at `position` into `buffer` at `offset`; resolves with the count read. */
export function readFd(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, buffer, offset, length, position, settle(resolve, reject)));
}

/** Writes all of `data` at the current position (looping over short writes). */
export async function writeAllFd(fd: number, data: Uint8Array): Promise<void> {
  for (let offset = 0; offset < data.byteLength; ) {
    offset += await new Promise<number>((resolve, reject) => fs.write(fd, data, offset, data.byteLength - offset, null, settle(resolve, reject)));
  }
}

export function fchmodFd(fd: number, mode: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fchmod(fd, mode, (error) => (error ? reject(error) : resolve())));
}

export function fchownFd(fd: number, uid: number, gid: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fchown(fd, uid, gid, (error) => (error ? reject(error) : resolve())));
}

/** Flushes the file's data and metadata to disk. */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/** Flushes the file's data and only the metadata needed to read it back (not its times): an overwrite of blocks it already has needs no journal commit. */
export function fdatasyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, (error) => (error ? reject(error) : resolve())));
}

/** Closes a descriptor nothing depends on any more (read-only, or one being given up): not waited for. */
export function closeFdQuietly(fd: number): void {
  fs.close(fd, () => undefined);
}
