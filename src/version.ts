// The service version: Health.version, `bulwark --version`. Kept equal to package.json (a test checks).
export const VERSION = '0.1.0'
