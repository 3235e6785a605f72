/** The names a sandbox spec chooses among, without the schemas (spec.ts): for code that only names them, such as the CLI's flags. */
export const RUNTIMES = ['python', 'node', 'bash', 'linux'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/**
 * From the least reach to the most (settings tighten along this order): `copy` reads the folder once,
 * at open, minus what .gitignore excludes, into a private /workspace the user's folder never sees
 * written; `ro` sees the whole folder, live, for the session's life; `rw` also writes it.
 */
export const WORKSPACE_ACCESS = ['none', 'copy', 'ro', 'rw'] as const;
export type WorkspaceAccess = (typeof WORKSPACE_ACCESS)[number];
