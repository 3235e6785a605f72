/** Single quotes make an argument one shell word, with nothing expanded. */
export function shellQuote(argument: string): string {
  return `'${argument.replace(/'/g, `'\\''`)}'`;
}
