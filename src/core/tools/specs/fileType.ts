/** A binary file's type from its first bytes, so a read can say what it is instead of returning base64. */

const SIGNATURES: readonly { bytes: readonly number[]; at?: number; type: string }[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], type: 'PNG image' },
  { bytes: [0xff, 0xd8, 0xff], type: 'JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], type: 'GIF image' },
  { bytes: [0x52, 0x49, 0x46, 0x46], type: 'RIFF container (WebP, WAV or AVI)' },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], type: 'PDF document' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], type: 'ZIP archive (also .docx, .xlsx, .jar, .whl)' },
  { bytes: [0x1f, 0x8b], type: 'gzip-compressed data' },
  { bytes: [0x42, 0x5a, 0x68], type: 'bzip2-compressed data' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], type: 'xz-compressed data' },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], type: 'zstd-compressed data' },
  { bytes: [0x75, 0x73, 0x74, 0x61, 0x72], at: 257, type: 'tar archive' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], type: 'ELF executable or library' },
  { bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66], type: 'SQLite database' },
  { bytes: [0x50, 0x41, 0x52, 0x31], type: 'Parquet file' },
  { bytes: [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], type: 'NumPy array (.npy)' },
  { bytes: [0x80], type: 'Python pickle (or other binary data)' },
  { bytes: [0x00, 0x61, 0x73, 0x6d], type: 'WebAssembly module' },
];

export function binaryType(data: Uint8Array): string {
  for (const signature of SIGNATURES) {
    const at = signature.at ?? 0;
    if (data.length >= at + signature.bytes.length && signature.bytes.every((byte, i) => data[at + i] === byte))
      return signature.type;
  }
  return 'binary data';
}

/** Lines of "offset  hex bytes  printable", like `xxd`, for the first `max` bytes. */
export function hexPreview(data: Uint8Array, startOffset: number, max = 256): string {
  const lines: string[] = [];
  const end = Math.min(data.length, max);
  for (let at = 0; at < end; at += 16) {
    const row = data.subarray(at, Math.min(at + 16, end));
    const hex = [...row].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
    const text = [...row].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.')).join('');
    lines.push(`${(startOffset + at).toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${text}`);
  }
  return lines.join('\n');
}
