/** Hostile image fixtures for the upload tests and the hostile sweep. */
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A valid 1-bit grayscale PNG of side x side blank pixels: ~8 KB on the wire for 8000, 64 Mpx decoded. */
export function pngBomb(side = 8000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  const rows = Buffer.alloc((Math.ceil(side / 8) + 1) * side); // filter byte 0 + zero bits per row
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

/** Bodies that claim to be images and are not, each with the content-type it claims. */
export const fakeImages: [string, Buffer | string, string][] = [
  ['SVG with a script', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml'],
  ['PHP named as JPEG', '<?php system($_GET["c"]); ?>', 'image/jpeg'],
  ['GIF header, no image', Buffer.from('GIF89a' + 'x'.repeat(50)), 'image/gif'],
  ['JPEG magic, then zeros', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100)]), 'image/jpeg'],
  ['HTML as octet-stream', '<html><body onload=alert(1)>', 'application/octet-stream'],
];
