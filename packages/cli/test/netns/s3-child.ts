// The object store as its own process (started by harness.ts startS3), so that restarting it is a
// real process restart over the same directory. Argument: JSON {host, port, dir, bucket}.
import S3rver from 's3rver';

const {host, port, dir, bucket} = JSON.parse(process.argv[2]!) as {
  host: string;
  port: number;
  dir: string;
  bucket: string;
};
const server = new S3rver({address: host, port, directory: dir, silent: true, configureBuckets: [{name: bucket}]});
const addr = await server.run();
process.stdout.write(`s3rver ready ${JSON.stringify(addr)}\n`);

// A graceful stop: connections are cut (as a restarting server would), files already written stay.
const stop = () => {
  server.httpServer?.closeAllConnections();
  void server.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
// The parent holds our stdin open: when it dies (even by SIGKILL), the pipe closes and we go too.
process.stdin.on('end', stop).resume();
