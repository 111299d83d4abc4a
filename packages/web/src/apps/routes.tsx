// The application pages, under /apps.
import { Route, Switch } from 'wouter';

export default function AppRoutes() {
  return (
    <Switch>
      <Route path="/">
        <p>applications: not built yet</p>
      </Route>
    </Switch>
  );
}
