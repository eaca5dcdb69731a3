// Access rules follow column and table renames (Grist's acl.py; recorded from Grist 1.7.17 in the
// `access-rules` scenario: `rec.Owner` reads `rec.Buyer` after the rename).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {aclColumnRenames, aclTableRenames} from '../src/access/rules/renames.js';

const rows = {
  resources: [
    {id: 2, tableId: 'Orders', colIds: 'Owner,Secret'},
    {id: 3, tableId: 'Orders', colIds: '*'},
    {id: 4, tableId: 'Notes', colIds: 'Owner'},
    {id: 5, tableId: '*', colIds: '*'},
  ],
  rules: [
    {id: 1, resource: 3, aclFormula: 'rec.Owner != user.Email and newRec.Owner  ==  "x"  # Owner', userAttributes: ''},
    {id: 2, resource: 4, aclFormula: 'rec.Owner == 1', userAttributes: ''},
    {
      id: 3,
      resource: 5,
      aclFormula: '',
      userAttributes: '{"name":"Who","tableId":"Orders","lookupColId":"Owner","charId":"Email"}',
    },
    {id: 4, resource: 5, aclFormula: 'user.Who.Owner == "a" and user.Owner == 1 and rec.x.Owner', userAttributes: ''},
    {id: 5, resource: 3, aclFormula: 'rec.Owner ==', userAttributes: ''},
  ],
};

test('a column rename reaches resources, lookups and the formulas that name the column, nothing else', () => {
  const e = aclColumnRenames(rows, 'Orders', 'Owner', 'Buyer');
  assert.equal([...e.resources], [[2, {colIds: 'Buyer,Secret'}]]);
  assert.equal(e.rules.get(1), {aclFormula: 'rec.Buyer != user.Email and newRec.Buyer  ==  "x"  # Owner'});
  assert.is(e.rules.has(2), false, 'rec.Owner of another table');
  assert.equal(JSON.parse(e.rules.get(3)!.userAttributes!), {
    name: 'Who',
    tableId: 'Orders',
    lookupColId: 'Buyer',
    charId: 'Email',
  });
  assert.equal(e.rules.get(4), {aclFormula: 'user.Who.Buyer == "a" and user.Owner == 1 and rec.x.Owner'});
  assert.is(e.rules.has(5), false, 'a formula that does not parse is left alone');
  assert.is(aclColumnRenames(rows, 'Orders', 'Nope', 'X').rules.size, 0);
});

test('a table rename reaches resources and user attributes', () => {
  const e = aclTableRenames(rows, 'Orders', 'Sales');
  assert.equal([...e.resources.keys()], [2, 3]);
  assert.is(JSON.parse(e.rules.get(3)!.userAttributes!).tableId, 'Sales');
});

test.run();
