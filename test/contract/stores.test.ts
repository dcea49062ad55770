import { forEachStore } from '../support/stores.js';
import { describeStoreContract } from './store-contract.js';

forEachStore(describeStoreContract);
