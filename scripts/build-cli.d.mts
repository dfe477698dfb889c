// Types of scripts/build-cli.mjs (plain JavaScript, so that Node runs it without tsx) for the TypeScript importing it.
export declare const cliOutDir: string;
export declare function cliBuildIsFresh(): boolean;
export declare function buildCli(): Promise<string>;
export declare function ensureCliBuilt(): Promise<string>;
