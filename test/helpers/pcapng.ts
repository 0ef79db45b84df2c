/**
 * A minimal pcapng writer for tests, written from the pcapng spec
 * (draft-ietf-opsawg-pcapng), independent of the reader under test
 * (src/netlink/pcap.ts).
 */

/** One block: type, total length, body padded to 4 bytes, total length again. */
export function pcapngBlock(type: number, body: Buffer, le = true): Buffer {
  const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
  const b = Buffer.alloc(12 + padded.length);
  const w = (v: number, o: number): void => {
    if (le) b.writeUInt32LE(v, o);
    else b.writeUInt32BE(v, o);
  };
  w(type, 0);
  w(b.length, 4);
  padded.copy(b, 8);
  w(b.length, b.length - 4);
  return b;
}
/**
 * A pcapng file: a section header, one nlmon interface (LINKTYPE_NETLINK,
 * optional if_tsresol 10^-tsresol), a Name Resolution block the reader must
 * skip, then one Enhanced Packet block per datagram behind an nlmon pseudo header.
 */
export function pcapng(ds: Array<{ protocol: number; bytes: Buffer; timestamp?: number }>, le: boolean, tsresol?: number): Buffer {
  const u32 = (v: number): Buffer => {
    const b = Buffer.alloc(4);
    if (le) b.writeUInt32LE(v >>> 0);
    else b.writeUInt32BE(v >>> 0);
    return b;
  };
  const u16 = (v: number): Buffer => {
    const b = Buffer.alloc(2);
    if (le) b.writeUInt16LE(v);
    else b.writeUInt16BE(v);
    return b;
  };
  const shb = pcapngBlock(0x0a0d0d0a, Buffer.concat([u32(0x1a2b3c4d), u16(1), u16(0), Buffer.alloc(8, 0xff)]), le);
  const opts = tsresol === undefined ? Buffer.alloc(0) : Buffer.concat([u16(9), u16(1), Buffer.from([tsresol, 0, 0, 0]), u16(0), u16(0)]);
  const idb = pcapngBlock(1, Buffer.concat([u16(253), u16(0), u32(0), opts]), le);
  const div = tsresol === undefined ? 1e6 : 10 ** tsresol;
  const epbs = ds.map((d) => {
    const hdr = Buffer.alloc(16);
    hdr.writeUInt16BE(4, 0);
    hdr.writeUInt16BE(824, 2);
    hdr.writeUInt16BE(d.protocol, 14);
    const data = Buffer.concat([hdr, d.bytes]);
    const ts = BigInt(Math.round((d.timestamp ?? 0) * div));
    return pcapngBlock(6, Buffer.concat([u32(0), u32(Number(ts >> 32n)), u32(Number(ts & 0xffffffffn)), u32(data.length), u32(data.length), data]), le);
  });
  // an unrelated block (Name Resolution, type 4) that the reader must skip
  const nrb = pcapngBlock(4, Buffer.concat([u16(0), u16(0)]), le);
  return Buffer.concat([shb, idb, nrb, ...epbs]);
}
