/**
 * Program output as text a client may show in a terminal. Clients such as Claude Code print tool
 * results in the user's terminal, where output from the sandbox could otherwise move the cursor,
 * rewrite what is on screen, set the window title or write the clipboard (OSC 52). Escape sequences
 * (CSI, OSC, and the other ESC sequences) are presentation, not content: they are dropped. Other
 * control characters but tab, line feed and carriage return are shown as their Unicode control
 * pictures (␇ for BEL, ␛ for a lone ESC), one character each, so nothing is hidden from the model.
 */

// CSI (7- and 8-bit), OSC (ended by BEL or ST, or not at all), and two-character ESC sequences.
const SEQUENCES = /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]/g;
// C0 controls but \t, \n and \r; DEL; C1 controls.
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

function picture(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return '\ufffd';
}

/** The text without escape sequences, and with the remaining control characters made visible. */
export function terminalSafe(text: string): string {
  if (!/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/.test(text)) return text;
  return text.replace(SEQUENCES, '').replace(CONTROLS, picture);
}
