import type { AnyStateMachine } from 'xstate'
import { exceptionRequestMachine } from '../../machines/exception-request.machine'
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine'

/**
 * Every machine in `machines/`, for the dashboard's diagram pages. A test checks that each
 * `machines/*.machine.ts` file appears here (the bundled server cannot glob the directory).
 */
export interface CatalogEntry {
  /** URL segment and export file name. */
  name: string
  file: string
  title: string
  machine: AnyStateMachine
  /** Which live actors run this machine. */
  actor: 'webhook' | 'exception-request'
}

export const MACHINE_CATALOG: CatalogEntry[] = [
  {
    name: 'webhook-delivery',
    file: 'machines/webhook-delivery.machine.ts',
    title: 'Webhook delivery',
    machine: webhookDeliveryMachine as AnyStateMachine,
    actor: 'webhook',
  },
  {
    name: 'exception-request',
    file: 'machines/exception-request.machine.ts',
    title: 'Exception request',
    machine: exceptionRequestMachine as AnyStateMachine,
    actor: 'exception-request',
  },
]
