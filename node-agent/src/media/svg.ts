import { readFile } from 'node:fs/promises';
import sharp from 'sharp';

/** Removes what can run or reach out (scripts, event handlers, foreignObject, external hrefs),
 *  then rasterises to PNG so the renderer never parses SVG itself. */
export function stripSvg(svg: string): string {
  return svg
    .replace(/<script[\s\S]*?<\/script\s*>/gi, '')
    .replace(/<script[^>]*\/>/gi, '')
    .replace(/<foreignObject[\s\S]*?<\/foreignObject\s*>/gi, '')
    .replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '')
    .replace(/\s(?:xlink:)?href\s*=\s*("(?!#)[^"]*"|'(?!#)[^']*')/gi, '')
    .replace(/<!ENTITY[\s\S]*?>/gi, '')
    .replace(/url\(\s*['"]?(?!#)[^)]*\)/gi, 'none');
}

export async function sanitizeSvg(inputPath: string, outPng: string): Promise<string> {
  const clean = stripSvg(await readFile(inputPath, 'utf8'));
  await sharp(Buffer.from(clean), { density: 144 }).png().toFile(outPng);
  return outPng;
}
