/** Webhooks: what is delivered to a receiver, the statistics, and changes to a webhook. */
import {createServer, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {type Scenario, site, tpath} from './common.js';

/** A local receiver of webhook deliveries (127.0.0.1, a free port). */
class Receiver {
  readonly got: {path: string; body: unknown}[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        this.got.push({path: req.url ?? '', body});
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next `n` deliveries, waiting up to `ms` for them (fewer when they do not come). */
  async take(n: number, ms = 10000): Promise<unknown[]> {
    const until = Date.now() + ms;
    while (this.got.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    return this.got.splice(0, n);
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export const webhooks: Scenario = {
  name: 'webhooks',
  async run(s) {
    const rx = new Receiver();
    await rx.start();
    try {
      const {doc} = await site(s, 'rechooks');
      const d = `/api/docs/${doc}`;
      const T = tpath(doc);
      await s.post('columns', 'chimpy', `${T}/columns`, {
        columns: [
          {id: 'Name', fields: {type: 'Text'}},
          {id: 'N', fields: {type: 'Numeric'}},
        ],
      });
      const made = await s.post('create', 'chimpy', `${d}/webhooks`, {
        webhooks: [
          {
            fields: {
              url: `${rx.url}/hook1`,
              eventTypes: ['add', 'update'],
              tableId: 'Table1',
              name: 'first',
              memo: 'a memo',
            },
          },
        ],
      });
      const id = made.body?.webhooks?.[0]?.id;
      await s.get('list after create', 'chimpy', `${d}/webhooks`);
      await s.post('add two', 'chimpy', `${T}/records`, {
        records: [{fields: {Name: 'a', N: 1}}, {fields: {Name: 'b'}}],
      });
      s.observe('delivery of add', await rx.take(1));
      await s.patch('update one', 'chimpy', `${T}/records`, {records: [{id: 1, fields: {N: 5}}]});
      s.observe('delivery of update', await rx.take(1));
      await s.get('stats after deliveries', 'chimpy', `${d}/webhooks`);
      await s.patch('disable', 'chimpy', `${d}/webhooks/${id}`, {enabled: false});
      await s.post('add while disabled', 'chimpy', `${T}/records`, {records: [{fields: {Name: 'c'}}]});
      s.observe('nothing while disabled', await rx.take(1, 1500));
      await s.patch('enable and filter', 'chimpy', `${d}/webhooks/${id}`, {
        enabled: true,
        eventTypes: ['update'],
        isReadyColumn: 'N',
      });
      await s.post('add with isReady column', 'chimpy', `${T}/records`, {records: [{fields: {Name: 'd', N: 0}}]});
      await s.patch('update to ready', 'chimpy', `${T}/records`, {records: [{id: 4, fields: {N: 2}}]});
      s.observe('delivery when ready', await rx.take(1));
      await s.patch('patch unknown field', 'chimpy', `${d}/webhooks/${id}`, {color: 'red'});
      await s.patch('patch bad column', 'chimpy', `${d}/webhooks/${id}`, {isReadyColumn: 'Nope'});
      await s.get('list as editor-less stranger', 'kiwi', `${d}/webhooks`);
      await s.get('list after patches', 'chimpy', `${d}/webhooks`);
      await s.del('delete queue', 'chimpy', `${d}/webhooks/queue`);
      await s.del('delete', 'chimpy', `${d}/webhooks/${id}`);
      await s.del('delete again', 'chimpy', `${d}/webhooks/${id}`);
      await s.get('list after delete', 'chimpy', `${d}/webhooks`);
    } finally {
      await rx.close();
    }
  },
};
