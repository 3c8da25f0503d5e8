import test from 'ava';
import sharp from 'sharp';
import { rasteriseSvg, sniffImage } from '@shorts/common/media/image';
import { sanitiseSvg } from '@shorts/common/media/svg-sanitise';

test('formats are told by their bytes', async (t) => {
  const img = sharp({ create: { width: 4, height: 4, channels: 3, background: '#123456' } });
  t.is(sniffImage(await img.clone().png().toBuffer()), 'png');
  t.is(sniffImage(await img.clone().jpeg().toBuffer()), 'jpeg');
  t.is(sniffImage(await img.clone().webp().toBuffer()), 'webp');
  t.is(sniffImage(await img.clone().gif().toBuffer()), 'gif');
  t.is(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), 'svg');
  t.is(
    sniffImage(Buffer.from('\uFEFF<?xml version="1.0"?>\n<!-- logo -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg>')),
    'svg',
  );
  for (const other of ['<!DOCTYPE html><html><svg></svg></html>', '<html><body>hi</body></html>', 'GIF', '{"svg": true}', '']) {
    t.is(sniffImage(Buffer.from(other)), undefined, other);
  }
  t.is(sniffImage(Buffer.from('RIFF\0\0\0\0WAVEfmt ')), undefined, 'a RIFF that is not WebP');
});

test('SVG sanitising drops scripts, handlers, entities and external references, keeps fragments', async (t) => {
  const dirty = `<?xml version="1.0"?>
<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="20" height="20" onload="steal()">
  <script type="text/javascript">fetch('http://evil.example')</script><script href="x.js"/>
  <style>@import url(http://evil.example/a.css); rect { fill: url(http://evil.example/p.svg#p) }</style>
  <defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>
  <foreignObject><iframe src="http://evil.example"></iframe></foreignObject>
  <image href="https://evil.example/track.png" width="5" height="5"/>
  <use xlink:href="#g"/>
  <rect width="20" height="20" fill="url(#g)" onclick='x()'/>&xxe;
</svg>`;
  const clean = sanitiseSvg(dirty);
  for (const bad of ['<script', 'onload', 'onclick', 'ENTITY', 'evil.example', 'foreignObject', '@import'])
    t.false(clean.includes(bad), bad);
  t.true(clean.includes('xlink:href="#g"'));
  t.true(clean.includes('url(#g)'));
  const png = await rasteriseSvg(Buffer.from(dirty));
  t.like(await sharp(png).metadata(), { format: 'png', width: 40, height: 40 });
});
