import {runSuite} from '../helpers/suites';

runSuite('unit/api');
