/** Python programs that try to leave a setuid or setgid file in /workspace through calls a chmod-only filter would miss. */

/** openat2(2) with O_CREAT and mode 04755: its mode sits in a struct behind a pointer, out of a seccomp filter's sight. */
export const OPENAT2 = `
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
how = ctypes.create_string_buffer(struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, 0o4755, 0))
fd = libc.syscall(437, -100, b'via-openat2', how, 24)
print('openat2', fd, os.strerror(ctypes.get_errno()) if fd < 0 else 'created')
`;

/** fchmodat2(2), the newer chmod call with flags. */
export const FCHMODAT2 = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
open('via-fchmodat2', 'w').close()
r = libc.syscall(452, -100, b'via-fchmodat2', 0o4755, 0)
print('fchmodat2', r, os.strerror(ctypes.get_errno()) if r < 0 else 'changed')
`;

/** An O_TMPFILE file made with mode 04755, then linked into the folder. */
export const TMPFILE = `
import os
try:
    fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o4755)
    os.write(fd, b'x')
    os.link(f'/proc/self/fd/{fd}', 'via-tmpfile')
    print('tmpfile linked')
except OSError as error:
    print('tmpfile', error)
`;

/** io_uring's IORING_OP_OPENAT with O_CREAT and mode 04755: the kernel opens it without a system call a filter sees. */
export const IO_URING = `
import ctypes, mmap, os, struct
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
ring = libc.syscall(425, 4, params)
if ring < 0:
    print('io_uring_setup', os.strerror(ctypes.get_errno()))
    raise SystemExit(0)
p = params.raw
sq_entries, cq_entries = struct.unpack_from('II', p, 0)
sq_head, sq_tail, sq_mask, _, _, _, sq_array = struct.unpack_from('7I', p, 40)
cq_head, cq_tail, cq_mask, _, _, cqes = struct.unpack_from('6I', p, 80)
sq = mmap.mmap(ring, sq_array + sq_entries * 4, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
cq = mmap.mmap(ring, cqes + cq_entries * 16, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x8000000)
sqes = mmap.mmap(ring, sq_entries * 64, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x10000000)
path = ctypes.create_string_buffer(b'via-io-uring')
# opcode 18 (IORING_OP_OPENAT), fd AT_FDCWD, addr the path, len the mode, op flags O_CREAT|O_WRONLY
sqes[0:64] = struct.pack('BBHiQQIIQ', 18, 0, 0, -100, 0, ctypes.addressof(path), 0o4755, os.O_CREAT | os.O_WRONLY, 7).ljust(64, b'\\0')
tail = struct.unpack_from('I', sq, sq_tail)[0]
struct.pack_into('I', sq, sq_array + (tail & struct.unpack_from('I', sq, sq_mask)[0]) * 4, 0)
struct.pack_into('I', sq, sq_tail, tail + 1)
done = libc.syscall(426, ring, 1, 1, 1, None, 0)
head = struct.unpack_from('I', cq, cq_head)[0]
res = struct.unpack_from('Qi', cq, cqes + (head & struct.unpack_from('I', cq, cq_mask)[0]) * 16)[1]
print('io_uring openat', done, res if res < 0 else 'created')
`;

/** A tar with a setuid file and a setgid directory, unpacked with tar -p (as a build or an npm package would). */
export const SETUID_TAR = `
import io, tarfile
with tarfile.open('/tmp/setuid.tar', 'w') as archive:
    data = b'#!/bin/sh\\necho owned\\n'
    member = tarfile.TarInfo('from-tar')
    member.size, member.mode = len(data), 0o4755
    archive.addfile(member, io.BytesIO(data))
    folder = tarfile.TarInfo('dir-from-tar')
    folder.type, folder.mode = tarfile.DIRTYPE, 0o2775
    archive.addfile(folder)
`;
