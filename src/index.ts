export {mainCommand} from './cli';
export {QuestbackSource} from './source';
