/**
 * Tar archives made byte by byte, for the hard-link tests: GNU tar extracts
 * a hard link member by linking to a name already extracted, so an archive
 * can give a denied file a second name and then replace it under its first.
 */

/** One ustar header block. */
export function tarHeader(name: string, type: '0' | '1', size: number, linkname = ''): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0);
  b.write('0000644\0', 100);
  b.write('0000000\0', 108);
  b.write('0000000\0', 116);
  b.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  b.write('00000000000\0', 136);
  b.write('        ', 148);
  b.write(type, 156);
  b.write(linkname, 157);
  b.write('ustar\0', 257);
  b.write('00', 263);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return b;
}

/** An archive: `N` (or `d/N`) a hard link to `.env`, then a regular `.env`. */
export function linkThenReplace(name = 'N'): Buffer {
  const data = Buffer.from('PLAIN=1\n');
  const body = Buffer.alloc(512);
  data.copy(body);
  return Buffer.concat([tarHeader(name, '1', 0, '.env'), tarHeader('.env', '0', data.length), body, Buffer.alloc(1024)]);
}
