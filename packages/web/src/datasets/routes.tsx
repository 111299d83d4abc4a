// The knowledge-base pages, under /datasets.
import { Route, Switch } from 'wouter';
import { DatasetsPage } from './DatasetsPage';

export default function DatasetRoutes() {
  return (
    <Switch>
      <Route path="/">
        <DatasetsPage />
      </Route>
    </Switch>
  );
}
