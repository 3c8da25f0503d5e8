// Building ffmpeg filter expressions that its parser accepts whatever their length.

/** ffmpeg's expression parser refuses a sum of more than 100 terms: sums of sums of at most 32. */
export function sumOf(terms: string[]): string {
  if (terms.length <= 32) return terms.join('+');
  const groups: string[] = [];
  for (let i = 0; i < terms.length; i += 32) groups.push(`(${sumOf(terms.slice(i, i + 32))})`);
  return sumOf(groups);
}
