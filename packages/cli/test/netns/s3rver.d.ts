// s3rver ships no types: just what the harness's child process uses.
declare module 's3rver' {
  import type {Server} from 'node:http';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory?: string;
    silent?: boolean;
    configureBuckets?: {name: string; configs?: string[]}[];
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    httpServer?: Server;
    run(): Promise<{address: string; port: number}>;
    close(): Promise<void>;
  }
}
