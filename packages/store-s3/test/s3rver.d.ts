// s3rver ships no types; the little the tests use.
declare module 's3rver' {
  export default class S3rver {
    constructor(opts: {
      port?: number;
      address?: string;
      directory: string;
      silent?: boolean;
      configureBuckets?: {name: string}[];
    });
    run(): Promise<{port: number; address: string}>;
    close(): Promise<void>;
  }
}
