// The knowledge-base pages, under /datasets: the list, and one dataset with
// its collections, import, search test and chunks.
import { Route, Switch } from 'wouter';
import { DatasetPage } from './DatasetPage';
import { DatasetsPage } from './DatasetsPage';
import './datasets.css';

export default function DatasetRoutes() {
  return (
    <Switch>
      <Route path="/">
        <DatasetsPage />
      </Route>
      <Route path="/:datasetId" nest>
        {(params) => <DatasetPage key={params.datasetId} datasetId={params.datasetId} />}
      </Route>
    </Switch>
  );
}
