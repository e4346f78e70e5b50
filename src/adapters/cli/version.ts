/** mnemo's version, as `mnemo --version` prints it (the `version` of package.json). */
export const MNEMO_VERSION = '0.1.0'
