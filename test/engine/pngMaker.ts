// Pictures for the interpreter tests, made inside the sandbox without any library.
/** Python that makes a WIDTH×HEIGHT PNG with the standard library only (no Pillow or matplotlib needed). */
export const PNG_MAKER = String.raw`
import struct, zlib
def png(width, height, rgb=(30, 120, 200)):
    row = b'\x00' + bytes(rgb) * width
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(row * height)) + chunk(b'IEND', b''))
class Picture:
    def __init__(self, width, height):
        self.data = png(width, height)
    def _repr_png_(self):
        return self.data
`;
