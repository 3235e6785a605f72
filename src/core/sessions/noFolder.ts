/** Sessions without a folder are keyed (and leased) under this value so that they can still be found again. */
export const NO_FOLDER = '(no folder)';
