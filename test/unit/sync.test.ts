import {runSuite} from '../helpers/suites';

runSuite('unit/sync');
