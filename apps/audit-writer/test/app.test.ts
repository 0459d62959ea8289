import { describeHealthOnlyService } from '@agentgw/testkit';
import { createApp } from '../src/app.js';

describeHealthOnlyService('audit-writer', createApp);
