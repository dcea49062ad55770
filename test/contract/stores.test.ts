import { forEachStore } from '../support/stores.js';
import { describeStoreContract } from './store-contract.js';
import { describeTriageContract } from './triage-contract.js';

forEachStore((fixture) => {
  describeStoreContract(fixture);
  describeTriageContract(fixture);
});
