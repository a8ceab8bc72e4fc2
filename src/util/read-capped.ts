/** Reads a fetch response's body up to `max` bytes; past that it stops reading and says so. */
export async function readCapped(res: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (n + value.length > max) {
      chunks.push(value.subarray(0, max - n));
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    n += value.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated };
}
