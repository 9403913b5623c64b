import {runSuite} from '../helpers/suites';

runSuite('unit/csv');
