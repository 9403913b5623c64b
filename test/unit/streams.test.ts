import {runSuite} from '../helpers/suites';

runSuite('unit/streams');
